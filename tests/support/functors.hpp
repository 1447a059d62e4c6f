// SPDX-License-Identifier: MIT
#pragma once
// Every elementwise functor the tests run, from the catalog (catalog/catalog.hpp): each row's
// instances (its default parameters, then variants) with what the tests need to know: the label,
// the kinks, the limits at +-inf. "kinks" lists every point where the first or second derivative
// jumps: a central difference straddling one is not a test of anything.

#include <string_view>
#include <vector>

#include <nonlin/nonlin.hpp>

#include "catalog/catalog.hpp"

namespace nonlin::test {

template <class F>
struct info {
  std::string_view name;
  F f;
  std::vector<double> kinks;
  catalog::limits at_infinity;
};

// visit(info) for every instance of every catalog row.
template <class Visitor>
void for_each_functor(Visitor&& visit) {
  catalog::for_each_instance([&]<class Row>(catalog::instance<typename Row::functor> const& i) {
    visit(info<typename Row::functor>{i.label, i.f, Row::kinks(i.f), Row::at_infinity(i.f)});
  });
}

}  // namespace nonlin::test
