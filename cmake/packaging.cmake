# Debian packages of an installed shmcoll: `cpack -G DEB` in the build folder writes one .deb per
# component, their dependencies on Debian's libraries found by dpkg-shlibdeps from what the
# binaries link, and the development package's from the headers' and pkg-config files' needs.
#   libshmcoll0           runtime: libshmcoll.so.0
#   libshmcoll-dev        headers, libshmcoll.so, the CMake package and the pkg-config files
#   shmcoll-tools         shmcoll-run, shmcoll-info, shmcoll-bench, shmcoll-overlap
#   shmcoll-mpi-openmpi   the MPI plugin for Open MPI (each plugin holds the core: no libshmcoll0)
#   shmcoll-mpi-mpich     the MPI plugin for MPICH and its ABI family
set(SHMCOLL_PACKAGE_MAINTAINER "shmcoll developers <shmcoll@localhost>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_NAME shmcoll)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Shared-memory collectives for the processes of one node")
set(CPACK_PACKAGE_CONTACT "${SHMCOLL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The runtime package's shlibs file and ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libshmcoll0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "shmcoll: the shared library")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libshmcoll-dev)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "shmcoll: C and C++ headers, CMake package (shmcoll::shmcoll) and pkg-config files")
# shmcoll.pc names hwloc and numa (Requires.private), which pkg-config needs to find.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libhwloc-dev, libnuma-dev, pkg-config")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME shmcoll-tools)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "shmcoll: the launcher shmcoll-run, shmcoll-info and the benchmarks")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS gnuplot)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
foreach(mpi ${SHMCOLL_MPI_FAMILIES})
  string(TOUPPER ${mpi} MPI)
  list(APPEND CPACK_COMPONENTS_ALL mpi_${mpi})
  set(CPACK_DEBIAN_MPI_${MPI}_PACKAGE_NAME shmcoll-mpi-${mpi})
  set(CPACK_DEBIAN_MPI_${MPI}_PACKAGE_SECTION libs)
  set(CPACK_COMPONENT_MPI_${MPI}_DESCRIPTION
      "shmcoll: the MPI plugin for ${mpi} (LD_PRELOAD=libshmcoll_mpi_${mpi}.so)")
endforeach()
include(CPack)
