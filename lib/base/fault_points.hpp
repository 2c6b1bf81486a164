// Named points inside the collectives' stages where a test can stop this process (a SIGKILL at
// a chosen moment, to show that its peers get an error instead of waiting forever). No code
// outside the tests installs a hook: each point is then one load and a predicted branch.
#pragma once

#include <atomic>

namespace shmcoll {

enum class FaultPoint {
  kArrived,         // this rank published its arrival in an operation
  kChunkPublished,  // a writer published a chunk into its slot
  kChunkRead,       // a reader copied (part of) a chunk out of a writer's slot
  kSingleCopy,      // about to move a block with cross-memory attach
  kDataMoved,       // this rank's data movement is done; agreement and departure follow
};
inline constexpr int kFaultPointCount = 5;

using FaultHook = void (*)(FaultPoint);

// relaxed: the hook is installed by a test before the collectives it targets run, in the same
// thread; no data is published through it.
inline std::atomic<FaultHook> fault_hook{nullptr};

inline void fault_point(FaultPoint point) {
  if (FaultHook hook = fault_hook.load(std::memory_order_relaxed)) [[unlikely]] {
    hook(point);
  }
}

}  // namespace shmcoll
