#include "lbo/report/html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "assets.hpp"
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

// No value the page embeds changes how it parses: a choice "<!--" and another "<script>" once
// made the HTML parser look past the data for a second "</script>", and the page drew nothing.
TEST(HtmlTest, no_string_in_the_data_can_open_a_comment_or_a_script) {
  ScratchDir dir;
  const std::string job = "name = \"h\"\nseed = 2\n[objective]\ncommand = [\"" + std::string(LBO_TEST_OBJECTIVE) +
                          "\", \"--metrics\", \"on\", \"--function\", \"<!--<script>\"]\ndirection = \"minimize\"\n"
                          "[policy]\nsurrogate = \"random\"\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n"
                          "tag = { type = \"categorical\", choices = [\"<!--\", \"<script>\", \"</script>\", \"a&b\"] }\n"
                          "[[tasks]]\nname = \"a\"\nbudget = 6\n";
  const auto out = lbo::testing::run_job(job, dir, 1);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const std::string page = lbo::report::report_html({out.run_dir});
  const std::string data_text = page.substr(page.find("window.LBO_DATA ="));
  const std::string data = data_text.substr(0, data_text.find("</script>"));
  for (const char* forbidden : {"<", ">", "&"}) EXPECT_EQ(count(data, forbidden), 0u) << forbidden;
  EXPECT_EQ(count(page, "<!--"), count(std::string(lbo::report::assets::page_template()), "<!--"));
  EXPECT_EQ(count(page, "<script"), count(page, "</script>"));
  const json parsed = page_data(page);
  EXPECT_EQ(parsed["runs"][0]["trials"][0]["metrics"]["function"], "<!--<script>");
  std::set<std::string> tags;
  for (const json& t : parsed["runs"][0]["trials"]) tags.insert(t["config"]["tag"].get<std::string>());
  EXPECT_GE(tags.count("<!--") + tags.count("<script>") + tags.count("</script>") + tags.count("a&b"), 2u);
}

TEST(HtmlTest, json_safe_escapes_what_could_end_or_hide_a_script) {
  EXPECT_EQ(lbo::report::assets::json_safe(R"({"a":"<!--<script></script>&"})"),
            R"({"a":"\u003c!--\u003cscript\u003e\u003c/script\u003e\u0026"})");
  EXPECT_EQ(lbo::report::assets::json_safe("\"\xe2\x80\xa8\xe2\x80\xa9\xe2\x82\xac\""), "\"\\u2028\\u2029\xe2\x82\xac\"");
  const json back = json::parse(lbo::report::assets::json_safe(json{{"s", "<!--\u2028&"}}.dump()));
  EXPECT_EQ(back["s"], "<!--\u2028&");
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
