#include "lbo/report/html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/report/run_data.hpp"
#include "run_job.hpp"

using nlohmann::json;
using lbo::testing::ScratchDir;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The data the page carries: the JSON after "window.LBO_DATA =", up to its script's end.
json page_data(const std::string& page) {
  const std::string marker = "window.LBO_DATA =";
  const std::size_t begin = page.find(marker);
  EXPECT_NE(begin, std::string::npos);
  const std::size_t end = page.find("</script>", begin);
  std::string text = page.substr(begin + marker.size(), end - begin - marker.size());
  while (!text.empty() && (text.back() == ';' || std::isspace(static_cast<unsigned char>(text.back())))) text.pop_back();
  return json::parse(text);
}

std::string metrics_job(const std::string& name, const std::string& function) {
  return "name = \"" + name + "\"\nseed = 2\n[objective]\ncommand = [\"" + std::string(LBO_TEST_OBJECTIVE) +
         "\", \"--metrics\", \"on\", \"--function\", \"" + function +
         "\"]\ndirection = \"minimize\"\n[policy]\nsurrogate = \"random\"\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n"
         "[[tasks]]\nname = \"a\"\nbudget = 4\n";
}

}  // namespace

// One page, everything inline: the library, the script and the data, with no text that could
// close a script element early, even when an objective reports "</script>" in its metrics.
TEST(HtmlTest, the_page_is_self_contained_and_its_data_survives_script_text) {
  ScratchDir dir;
  const std::string hostile = "</script><b>bold</b>";
  const auto out = lbo::testing::run_job(metrics_job("one", hostile), dir, 1);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const std::string page = lbo::report::report_html({out.run_dir});
  EXPECT_EQ(count(page, "/*@"), 0u) << "a placeholder is left";
  EXPECT_EQ(count(page, "<script"), count(page, "</script>"));
  // Nothing is fetched when it is viewed: no script, stylesheet, image or font by URL.
  EXPECT_EQ(count(page, "<script src"), 0u);
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_EQ(count(page, "src=\"http"), 0u);
  EXPECT_EQ(count(page, "url(http"), 0u);
  EXPECT_NE(page.find("echarts"), std::string::npos);
  const json data = page_data(page);
  ASSERT_EQ(data["runs"].size(), 1u);
  EXPECT_EQ(data["runs"][0]["trials"].size(), 4u);
  EXPECT_EQ(data["runs"][0]["trials"][0]["metrics"]["function"], hostile);
  EXPECT_NE(data["chart_library"].get<std::string>().find("ECharts"), std::string::npos);
  // The data is run_data()'s.
  json expected = lbo::report::run_data(out.run_dir);
  EXPECT_EQ(data["runs"][0]["trials"], expected["trials"]);
}

// Several runs side by side; write_report replaces the file whole.
TEST(HtmlTest, several_runs_go_on_one_page) {
  ScratchDir dir;
  const auto first = lbo::testing::run_job(metrics_job("first", "sum"), dir, 1);
  const auto second = lbo::testing::run_job(metrics_job("second", "sum"), dir, 2);
  const std::filesystem::path file = dir.path() / "compare.html";
  lbo::report::write_report({first.run_dir, second.run_dir}, file);
  const json data = page_data(lbo::testing::read_text(file));
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_EQ(data["runs"][0]["name"], "first");
  EXPECT_EQ(data["runs"][1]["name"], "second");
  EXPECT_EQ(data["runs"][1]["allocations"][0]["slots"], 2);
  EXPECT_THROW(lbo::report::write_report({first.run_dir, dir.path() / "nowhere"}, file), lbo::InputError);
  EXPECT_EQ(page_data(lbo::testing::read_text(file))["runs"].size(), 2u);  // the old page stands
}
