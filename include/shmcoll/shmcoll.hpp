// Umbrella header of the shmcoll C++ API.
#pragma once

#include "shmcoll/bootstrap.hpp"
#include "shmcoll/datatype.hpp"
#include "shmcoll/error.hpp"
#include "shmcoll/options.hpp"
#include "shmcoll/team.hpp"
