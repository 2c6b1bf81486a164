// A description of the machine a benchmark ran on, printed with every result.
#pragma once

#include <string>

namespace shmcoll::bench {

std::string describe_machine();

}  // namespace shmcoll::bench
