// CheckLevel::kDeferred: the cross-rank comparisons a rank left an operation without, made in a
// later call (settle_deferred_checks, operation.hpp). Two kinds of operation leave them:
// - one whose root had not arrived yet (CollectiveOp::defer_to_root): made at the rank's next
//   arrival, when the root most likely has;
// - one in which the rank moves nothing (CollectiveOp::quiet_: a v-form rank whose own part is
//   empty): made in a batch, at the rank's next call that is not such an operation, or before
//   the oldest is kWindow operations old, or when the rank leaves the team. Such a call then
//   reads no peer's line: comparing it at once would cost a cross-core transfer of the root's
//   status line each call, which made an empty call several times the MPIs' own.
//
// The window's invariant: a rank makes the comparisons it deferred in operation O before it
// arrives in operation O + kWindow. What those comparisons read of a peer stays in place until
// then: a rank rewrites its signature history entry of O (CollectiveOp::record_signature) and a
// scatterv root the inbox record of O (inbox::record_free) only once every rank concerned has
// gone that far.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "protocol/signature.hpp"

namespace shmcoll {

struct DeferredCheck {
  std::uint64_t op = 0;
  OpSignature sig;  // its type's name is the caller's: type_name holds a copy
  // What the operation expected of its peers' sizes, -1 for nothing: a rank that is not the
  // root expects this of the root (a v-form root's word must give it, where it gives one) and,
  // but in a v-form, of every other peer; the root expects it of every other peer.
  std::int64_t expected_bytes = -1;
  // A copy of the datatype's name for the messages: the caller's may not outlive its call (the
  // MPI plugin names derived types per call).
  char type_name[48] = {};
};

// A ring of at most kWindow pending checks, oldest first.
class DeferredChecks {
 public:
  static constexpr std::uint64_t kWindow = 8;

  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == kWindow; }
  // The operation of the oldest pending check; only when not empty.
  std::uint64_t oldest_op() const { return ring_[head_].op; }
  // Whether the pending checks must be made before this rank arrives in operation `next`.
  bool due_before(std::uint64_t next) const { return !empty() && oldest_op() + kWindow <= next; }

  // Not when full (callers settle what is due before they arrive, which leaves room).
  void push(std::uint64_t op, const OpSignature& sig, std::int64_t expected_bytes) {
    DeferredCheck& check = ring_[(head_ + count_) % kWindow];
    ++count_;
    check.op = op;
    check.sig = sig;
    check.expected_bytes = expected_bytes;
    const std::size_t n = strnlen(sig.type.name, sizeof check.type_name - 1);
    std::memcpy(check.type_name, sig.type.name, n);
    check.type_name[n] = '\0';
  }
  // The oldest pending check (its sig.type.name is the caller's, which may be gone: a copy
  // names the type with type_name); only when not empty.
  const DeferredCheck& oldest() const { return ring_[head_]; }
  void drop_oldest() {
    head_ = (head_ + 1) % kWindow;
    --count_;
  }

 private:
  std::array<DeferredCheck, kWindow> ring_{};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace shmcoll
