#include "protocol/signature.hpp"

namespace shmcoll {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBarrier:
      return "barrier";
    case Kind::kBcast:
      return "bcast";
    case Kind::kScatter:
      return "scatter";
    case Kind::kScatterv:
      return "scatterv";
    case Kind::kGather:
      return "gather";
    case Kind::kGatherv:
      return "gatherv";
  }
  return "unknown collective";
}

std::string OpSignature::describe_bytes() const {
  return std::to_string(bytes) + " bytes (" + std::to_string(count) + " x " + type.name + ")";
}

}  // namespace shmcoll
