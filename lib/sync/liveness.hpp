// Whether a peer process still runs. A killed child stays a zombie until its parent reaps it,
// and kill(pid, 0) succeeds on zombies, so the process state is read from /proc as well.
#pragma once

#include <sys/types.h>

namespace shmcoll::sync {

bool process_alive(pid_t pid);

// When `pid` started, in clock ticks after boot (/proc/<pid>/stat, field 22): with the pid it
// names one process, whatever process gets the pid later. 0 when there is no such process or
// /proc cannot tell.
unsigned long long process_start_ticks(pid_t pid);

}  // namespace shmcoll::sync
