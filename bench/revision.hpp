// The source revision the benchmark programs were built from (git describe --dirty), for the
// records they write; defined in the build directory (cmake/source_revision.cmake).
#pragma once

namespace shmcoll::bench {

const char* source_revision();

}  // namespace shmcoll::bench
