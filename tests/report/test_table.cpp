// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/table.hpp"

#include <gtest/gtest.h>

namespace streampipe::report {
namespace {

TEST(Table, AlignsColumns) {
  Table t({"name", "GB/s"});
  t.add_row({"pinned", "55.1"});
  t.add_row({"pageable h2d", "9.8"});
  EXPECT_EQ(t.str("title"),
            "title\n"
            "name          GB/s\n"
            "------------------\n"
            "pinned        55.1\n"
            "pageable h2d   9.8\n");
}

TEST(Table, RejectsRaggedRows) {
  Table t({"a", "b"});
  EXPECT_THROW(t.add_row({"1"}), std::invalid_argument);
  EXPECT_THROW(Table({"a"}, {Align::left, Align::right}), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::report
