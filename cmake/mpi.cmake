# The MPIs the plugin is built for, each into libshmcoll_mpi_<family>.so, where <family> is
# `openmpi` for an Open MPI and `mpich` for the MPIs of MPICH's ABI (MVAPICH, Intel MPI, Cray
# MPICH), told apart by what their mpi.h defines (lib/mpi/config.cpp checks the same at run
# time). An MPI named the CMake way, -DMPI_HOME=... or -DMPI_C_COMPILER=... (a cluster's own
# build), is found by FindMPI and is the only one built for; otherwise each of the
# distribution's Open MPI and MPICH that pkg-config finds.
# Sets SHMCOLL_MPI_FAMILIES and, per family, SHMCOLL_MPI_LINK_<family> (the target to link)
# and SHMCOLL_MPI_RUN_<family> (its launcher, for the tests and benchmarks; may be NOTFOUND).
set(SHMCOLL_MPI_FAMILIES "")
if(NOT SHMCOLL_BUILD_MPI)
  return()
endif()
if(MPI_HOME OR MPI_C_COMPILER OR DEFINED ENV{MPI_HOME})
  enable_language(C)
  set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
  find_package(MPI REQUIRED COMPONENTS C)
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  check_symbol_exists(OMPI_MAJOR_VERSION mpi.h SHMCOLL_NAMED_MPI_IS_OPEN_MPI)
  unset(CMAKE_REQUIRED_INCLUDES)
  if(SHMCOLL_NAMED_MPI_IS_OPEN_MPI)
    set(SHMCOLL_MPI_FAMILIES openmpi)
  else()
    set(SHMCOLL_MPI_FAMILIES mpich)
  endif()
  set(SHMCOLL_MPI_LINK_${SHMCOLL_MPI_FAMILIES} MPI::MPI_C)
  set(SHMCOLL_MPI_RUN_${SHMCOLL_MPI_FAMILIES} ${MPIEXEC_EXECUTABLE})
  # The library's version text up to its first line break (MPICH's runs over many).
  string(REPLACE "\t" " " _shmcoll_mpi_version "${MPI_C_LIBRARY_VERSION_STRING}")
  string(REGEX REPLACE "\n.*" "" _shmcoll_mpi_version "${_shmcoll_mpi_version}")
  message(STATUS "MPI plugin: libshmcoll_mpi_${SHMCOLL_MPI_FAMILIES}.so for the MPI of "
                 "${MPI_C_COMPILER} (${_shmcoll_mpi_version})")
  unset(_shmcoll_mpi_version)
  return()
endif()
pkg_check_modules(OPENMPI IMPORTED_TARGET ompi-c)
pkg_check_modules(MPICH IMPORTED_TARGET mpich)
if(OPENMPI_FOUND)
  list(APPEND SHMCOLL_MPI_FAMILIES openmpi)
  set(SHMCOLL_MPI_LINK_openmpi PkgConfig::OPENMPI)
  find_program(SHMCOLL_MPI_RUN_openmpi NAMES mpirun.openmpi)
endif()
if(MPICH_FOUND)
  list(APPEND SHMCOLL_MPI_FAMILIES mpich)
  set(SHMCOLL_MPI_LINK_mpich PkgConfig::MPICH)
  find_program(SHMCOLL_MPI_RUN_mpich NAMES mpiexec.mpich mpirun.mpich)
endif()
