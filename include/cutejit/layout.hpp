/** \file
 * Umbrella header for cutejit's host-side CuTe layout algebra.
 */
#pragma once

#include <cutejit/core/error.hpp>
#include <cutejit/layout/int_tuple.hpp>
#include <cutejit/layout/layout.hpp>
#include <cutejit/layout/algebra.hpp>
#include <cutejit/layout/identity_layout.hpp>
#include <cutejit/layout/swizzle.hpp>
#include <cutejit/layout/bank_conflicts.hpp>
