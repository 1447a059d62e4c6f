// SPDX-License-Identifier: MIT
// The catalog covers nonlin: every public elementwise functor of include/nonlin/*.hpp (a
// non-template struct at namespace scope with a derivative member) has exactly one row, named as
// the type is spelled (fast:: for nonlin::fast), and every row's instances start with its
// default functor under the row's name. Adding a functor without a row fails here; a row that
// names no functor does not compile (catalog/catalog.hpp checks each row against its functor).

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/catalog.hpp"

namespace nonlin::test {
namespace {

// A public functor: its name qualified below nonlin::, and the "// Bound: ..." line of the
// comment above it ("" if none).
struct declared_functor {
  std::string name;
  std::string bound_line;
};

// The elementwise functors one public header declares.
std::vector<declared_functor> functors_in(std::filesystem::path const& header) {
  std::ifstream in(header);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  std::string prefix;
  for (std::string const& line : lines) {
    if (line.starts_with("namespace nonlin::fast")) {
      prefix = "fast::";
    }
  }
  std::vector<declared_functor> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string const& line = lines[i];
    if (!line.starts_with("struct ") || !line.ends_with(" {")) {
      continue;
    }
    if (i > 0 && lines[i - 1].starts_with("template <")) {
      continue;  // a functor template (the gated units): not an elementwise activation
    }
    std::string const name = line.substr(7, line.size() - 9);
    bool has_derivative = false;
    for (std::size_t j = i + 1; j < lines.size() && lines[j] != "};"; ++j) {
      has_derivative = has_derivative || lines[j].find(" derivative(") != std::string::npos;
    }
    std::string bound;
    for (std::size_t j = i; j-- > 0 && lines[j].starts_with("//");) {
      if (lines[j].starts_with("// Bound: ")) {
        bound = lines[j];
      }
    }
    if (has_derivative) {
      found.push_back({prefix + name, bound});
    }
  }
  return found;
}

std::vector<declared_functor> public_functors() {
  std::filesystem::path const include = std::filesystem::path(NONLIN_SOURCE_DIR) / "include/nonlin";
  std::vector<declared_functor> all;
  for (auto const& entry : std::filesystem::directory_iterator(include)) {
    if (entry.path().extension() == ".hpp") {
      for (declared_functor const& f : functors_in(entry.path())) {
        all.push_back(f);
      }
    }
  }
  return all;
}

TEST(Catalog, EveryPublicFunctorHasOneRow) {
  std::set<std::string> declared;
  for (declared_functor const& f : public_functors()) {
    declared.insert(f.name);
  }
  std::multiset<std::string> rows;
  catalog::for_each_row([&]<class Row>() { rows.insert(std::string(Row::name)); });
  for (std::string const& name : declared) {
    EXPECT_EQ(rows.count(name), 1u) << "nonlin::" << name << " needs one row in catalog/";
  }
  for (std::string const& name : rows) {
    EXPECT_TRUE(declared.contains(name)) << "row " << name << " is not a public functor's name";
  }
  // The scan found the functors at all (it would find none if the headers moved).
  EXPECT_GE(declared.size(), 28u);
  EXPECT_EQ(rows.size(), catalog::row_count());
}

// Every functor's doc line states its row's bounds, as Highway's headers state each function's
// max error: "// Bound: F ulp forward, D ulp derivative, ...".
TEST(Catalog, DocLinesStateTheRowsBounds) {
  std::vector<declared_functor> const functors = public_functors();
  catalog::for_each_row([&]<class Row>() {
    auto const found = std::find_if(functors.begin(), functors.end(),
                                    [](declared_functor const& f) { return f.name == Row::name; });
    ASSERT_NE(found, functors.end()) << Row::name;
    char expected[96];
    std::snprintf(expected, sizeof expected, "// Bound: %g ulp forward, %g ulp derivative, ",
                  Row::bounds.forward.ulp, Row::bounds.derivative.ulp);
    EXPECT_TRUE(found->bound_line.starts_with(expected))
        << Row::name << ": the comment above the functor says \"" << found->bound_line
        << "\", the catalog \"" << expected << "\"";
  });
}

TEST(Catalog, RowsStartWithTheirDefaultFunctor) {
  catalog::for_each_row([]<class Row>() {
    auto const instances = Row::instances();
    ASSERT_FALSE(instances.empty()) << Row::name;
    EXPECT_EQ(instances.front().label, Row::name);
    std::set<std::string_view> labels;
    for (auto const& i : instances) {
      EXPECT_TRUE(labels.insert(i.label).second) << "label " << i.label << " twice";
    }
  });
}

// What a row says of its bounds: 2 where it says nothing, else a bound of at most 4 with why
// (the fast tier: its own bound).
TEST(Catalog, BoundsAboveTwoSayWhy) {
  catalog::for_each_row([]<class Row>() {
    for (catalog::ulp_bound const& b : {Row::bounds.forward, Row::bounds.derivative}) {
      EXPECT_GE(b.ulp, 2.0) << Row::name;
      if (Row::level == catalog::tier::default_tier) {
        EXPECT_LE(b.ulp, 4.0) << Row::name;
      }
      if (b.ulp > 2.0) {
        EXPECT_FALSE(b.why.empty()) << Row::name;
      }
    }
  });
}

}  // namespace
}  // namespace nonlin::test
