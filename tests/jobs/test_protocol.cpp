#include "lbo/jobs/protocol.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace lbo::jobs;

TEST(ProtocolTest, placeholders_expand_everywhere_in_an_argument) {
  const PlaceholderValues v{.dataset = "/d/x.csv", .task = "t1", .trial = "17",
                            .params_file = "/w/params.json", .workdir = "/w"};
  EXPECT_EQ(expand_placeholders("--data={dataset}", v), "--data=/d/x.csv");
  EXPECT_EQ(expand_placeholders("{workdir}/out-{trial}-{task}", v), "/w/out-17-t1");
  EXPECT_EQ(expand_placeholders("{params_file}", v), "/w/params.json");
  EXPECT_EQ(expand_placeholders("no placeholders {} { x }", v), "no placeholders {} { x }");
}

TEST(ProtocolTest, unknown_placeholders_are_found) {
  EXPECT_EQ(find_unknown_placeholder("{dataset}/{nope}"), "nope");
  EXPECT_FALSE(find_unknown_placeholder("{dataset}-{trial}").has_value());
  EXPECT_FALSE(find_unknown_placeholder("{\"json\": 1}").has_value());  // not an identifier
  EXPECT_TRUE(uses_placeholder("x{dataset}", "dataset"));
  EXPECT_FALSE(uses_placeholder("x{task}", "dataset"));
}

TEST(ProtocolTest, full_result_parses) {
  const ParsedResult p =
      parse_objective_result(R"({"objective": 0.91, "steps": [0.5, 0.7], "metrics": {"auc": 0.9}})");
  ASSERT_TRUE(p.result) << p.error;
  EXPECT_DOUBLE_EQ(p.result->objective, 0.91);
  EXPECT_EQ(p.result->steps, (std::vector<double>{0.5, 0.7}));
  EXPECT_EQ(nlohmann::json::parse(p.result->metrics_json)["auc"], 0.9);
  const ParsedResult bare = parse_objective_result(R"({"objective": -3})");
  ASSERT_TRUE(bare.result);
  EXPECT_EQ(bare.result->metrics_json, "{}");
  // A stepwise objective may leave "objective" out: its last step stands for the trial.
  const ParsedResult steps_only = parse_objective_result(R"({"steps": [0.2, 0.4, 0.3]})");
  ASSERT_TRUE(steps_only.result) << steps_only.error;
  EXPECT_DOUBLE_EQ(steps_only.result->objective, 0.3);
  EXPECT_FALSE(parse_objective_result(R"({"steps": []})").result);
}

TEST(ProtocolTest, bad_results_give_reasons) {
  struct Case {
    const char* text;
    const char* reason;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"not json", "not valid JSON"},
           {"[1, 2]", "not a JSON object"},
           {R"({"value": 1})", "no \"objective\""},
           {R"({"objective": "0.9"})", "\"objective\" is not a number"},
           {R"({"objective": NaN})", "NaN or Infinity"},
           {R"({"objective": -Infinity})", "NaN or Infinity"},
           {R"({"objective": 1e999})", "not valid JSON"},
           {R"({"objective": 1, "steps": 3})", "\"steps\" is not an array"},
           {R"({"objective": 1, "steps": [1, "x"]})", "not a finite number"},
           {R"({"objective": 1, "metrics": 3})", "\"metrics\" is not an object"},
       }) {
    const ParsedResult p = parse_objective_result(c.text);
    EXPECT_FALSE(p.result) << c.text;
    EXPECT_NE(p.error.find(c.reason), std::string::npos) << c.text << " → " << p.error;
  }
}

TEST(ProtocolTest, json_object_lines_are_recognised) {
  EXPECT_TRUE(looks_like_json_object("  {\"objective\": 1}\r"));
  EXPECT_FALSE(looks_like_json_object("fold 1: {auc} 0.9"));
  EXPECT_FALSE(looks_like_json_object(""));
}

TEST(ProtocolTest, a_report_has_a_positive_integer_step_a_finite_value_and_optional_metrics) {
  const ParsedReport full = parse_report(R"({"step": 3, "value": -0.25, "metrics": {"loss": 1.5}})");
  ASSERT_TRUE(full.report) << full.error;
  EXPECT_EQ(full.report->step, 3);
  EXPECT_EQ(full.report->value, -0.25);
  EXPECT_EQ(nlohmann::json::parse(full.report->metrics_json)["loss"], 1.5);
  const ParsedReport bare = parse_report(R"({"value": 2, "step": 4.0})");  // an integral double is a step
  ASSERT_TRUE(bare.report) << bare.error;
  EXPECT_EQ(bare.report->step, 4);
  EXPECT_EQ(bare.report->metrics_json, "{}");
}

TEST(ProtocolTest, a_bad_report_says_what_is_wrong_and_never_throws) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"step": 1, "value": NaN})", "NaN or Infinity"},
      {R"({"step": 1, "value": "0.5"})", "\"value\" is not a finite number"},
      {R"({"step": 1})", "\"value\" is not a finite number"},
      {R"({"value": 1})", "\"step\" is not a positive integer"},
      {R"({"step": 0, "value": 1})", "\"step\" is not a positive integer"},
      {R"({"step": -2, "value": 1})", "\"step\" is not a positive integer"},
      {R"({"step": 1.5, "value": 1})", "\"step\" is not a positive integer"},
      {R"({"step": 1e300, "value": 1})", "\"step\" is not a positive integer"},
      {R"({"step": 1, "value": 1, "metrics": [1]})", "\"metrics\" is not an object"},
      {R"([1, 2])", "not a JSON object"},
      {R"({"step": 1, "value": 1)", "not valid JSON"},
      {"", "not valid JSON"},
  };
  for (const auto& [text, why] : cases) {
    const ParsedReport parsed = parse_report(text);
    EXPECT_FALSE(parsed.report) << text;
    EXPECT_NE(parsed.error.find(why), std::string::npos) << text << ": " << parsed.error;
  }
}

TEST(ProtocolTest, several_objectives_are_given_by_name_and_every_mistake_says_which) {
  const std::vector<std::string> names = {"auc", "train_s"};
  const ParsedResult p = parse_objective_result(R"({"train_s": 12.5, "auc": 0.81, "metrics": {"mb": 3}})", names);
  ASSERT_TRUE(p.result) << p.error;
  EXPECT_EQ(p.result->values, (std::vector<double>{0.81, 12.5}));  // the job's order
  EXPECT_DOUBLE_EQ(p.result->objective, 0.81);                      // the primary
  EXPECT_EQ(nlohmann::json::parse(p.result->metrics_json)["mb"], 3);
  EXPECT_TRUE(parse_objective_result(R"({"objective": 1})").result->values.empty());  // one objective: none
  struct Case {
    const char* text;
    const char* reason;
  };
  for (const Case& c : std::initializer_list<Case>{
           {R"({"auc": 0.8})", "result has no \"train_s\"; [objective] objectives names auc, train_s: give each, e.g. {\"auc\": 1.5, \"train_s\": 1.5}"},
           {R"({"auc": 0.8, "train_s": "fast"})", "result \"train_s\" is not a number"},
           {R"({"auc": NaN, "train_s": 1})", "NaN or Infinity"},
           {R"({"auc": 0.8, "train_s": 1, "acc": 0.7})", "result \"acc\" is none of the objectives (auc, train_s); put other values in \"metrics\""},
           {R"({"objective": 0.8, "train_s": 1})", "result \"objective\" is none of the objectives"},
       }) {
    const ParsedResult bad = parse_objective_result(c.text, names);
    EXPECT_FALSE(bad.result) << c.text;
    EXPECT_NE(bad.error.find(c.reason), std::string::npos) << c.text << " → " << bad.error;
  }
}
