#include "csv_table.hpp"

#include <gtest/gtest.h>

#include "lbo/orchestrator/results_csv.hpp"

using lbo::report::parse_csv;

TEST(CsvTableTest, reads_back_what_csv_field_writes) {
  const std::vector<std::string> fields = {"plain", "a,b", "say \"hi\"", "two\nlines", ""};
  std::string text = "k0,k1,k2,k3,k4\n";
  for (std::size_t i = 0; i < fields.size(); ++i) text += (i ? "," : "") + lbo::orchestrator::csv_field(fields[i]);
  text += "\r\n";
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 1u);
  for (std::size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(rows[0].at("k" + std::to_string(i)), fields[i]);
}

TEST(CsvTableTest, a_row_cut_short_lacks_the_missing_keys) {
  const auto rows = parse_csv("a,b,c\n1,2,3\n4,5");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("b"), "5");
  EXPECT_FALSE(rows[1].count("c"));
  EXPECT_TRUE(parse_csv("").empty());
  EXPECT_TRUE(parse_csv("a,b\n").empty());
}
