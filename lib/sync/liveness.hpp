// Whether a peer process still runs. A killed child stays a zombie until its parent reaps it,
// and kill(pid, 0) succeeds on zombies, so the process state is read from /proc as well.
#pragma once

#include <sys/types.h>

namespace shmcoll::sync {

bool process_alive(pid_t pid);

}  // namespace shmcoll::sync
