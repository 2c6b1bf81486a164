// Shared (cross-process) futex calls on 32-bit words inside the segment. FUTEX_PRIVATE_FLAG must
// not be used: private futexes are keyed by the virtual address of one process, so a waiter in
// another process would never be woken. (std::atomic::wait is private for the same reason.)
#pragma once

#include <atomic>
#include <cstdint>

namespace shmcoll::sync {

// Sleeps while *word == expected, at most `timeout_ns`. Returns on a wake, a timeout, a signal
// or a changed value; the caller re-checks its condition in every case.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns);
// Wakes every process sleeping on `word`.
void futex_wake_all(std::atomic<std::uint32_t>* word);

}  // namespace shmcoll::sync
