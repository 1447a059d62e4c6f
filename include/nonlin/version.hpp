// SPDX-License-Identifier: MIT
#pragma once

// The single source of nonlin's version: CMakeLists.txt parses these three lines.
#define NONLIN_VERSION_MAJOR 0
#define NONLIN_VERSION_MINOR 1
#define NONLIN_VERSION_PATCH 0
