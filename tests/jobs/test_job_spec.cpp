#include "lbo/jobs/job_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "lbo/jobs/error.hpp"

using namespace lbo::jobs;
namespace fs = std::filesystem;

namespace {

// A job folder with a data file and an objective script, like a user's.
class JobSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lbo-jobspec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "data");
    fs::create_directories(dir_ / "objectives");
    std::ofstream(dir_ / "data" / "year-1.csv") << "a,b\n1,2\n";
    std::ofstream(dir_ / "objectives" / "train.py") << "print('{\"objective\": 1}')\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobSpec parse(const std::string& text) { return parse_job(text, dir_ / "job.toml"); }

  // The InputError message for `text` (fails the test if it parses).
  std::string error_of(const std::string& text) {
    try {
      parse(text);
    } catch (const lbo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }

  fs::path dir_;
};

const std::string kValid = R"(name = "quickstart"
seed = 7

[objective]
command = ["/bin/sh", "objectives/train.py", "--data", "{dataset}", "--params", "{params_file}"]
direction = "maximize"
timeout_s = 600
retries = 1

[policy]
surrogate = "random"
initial_random = 5

[workers]
local_slots = 2
slots_per_rank = 1

[space]
model = { type = "categorical", choices = ["xgboost", "logreg"] }
lr    = { type = "float", low = 1e-3, high = 0.5, log = true, when = { model = "xgboost" } }
depth = { type = "int", low = 1, high = 10, when = { model = "xgboost" } }
C     = { type = "float", low = 1e-3, high = 10.0, log = true, when = { model = "logreg" } }

[[tasks]]
name = "year-1"
dataset = "data/year-1.csv"
budget = 30

[[tasks]]
name = "year-2"
dataset = "data/year-1.csv"
budget = 5
)";

// kValid with the first occurrence of `from` replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}
std::string valid_with(const std::string& from, const std::string& to) { return with(kValid, from, to); }

}  // namespace

TEST_F(JobSpecTest, parses_the_issue_example) {
  const JobSpec job = parse(kValid);
  EXPECT_EQ(job.name, "quickstart");
  EXPECT_EQ(job.seed, 7u);
  EXPECT_EQ(job.objective.direction, Direction::maximize);
  EXPECT_EQ(job.objective.timeout_s, 600.0);
  EXPECT_EQ(job.objective.retries, 1);
  EXPECT_EQ(job.policy.surrogate, SurrogateKind::random);
  EXPECT_EQ(job.policy.initial_random, 5);
  EXPECT_EQ(job.workers.local_slots, 2);
  EXPECT_EQ(job.workers.slots_per_rank, std::optional<int>(1));
  EXPECT_FALSE(job.workers.local_slots_auto);
  ASSERT_EQ(job.space.size(), 4);
  // File order is kept although TOML tables are unordered.
  EXPECT_EQ(job.space.params()[0].name, "model");
  EXPECT_EQ(job.space.params()[1].name, "lr");
  EXPECT_EQ(job.space.params()[2].name, "depth");
  EXPECT_EQ(job.space.params()[3].name, "C");
  EXPECT_TRUE(job.space.params()[1].log);
  ASSERT_EQ(job.space.params()[1].when.size(), 1u);
  EXPECT_EQ(job.space.params()[1].when[0].parent, 0);
  EXPECT_EQ(job.space.params()[1].when[0].choices, std::vector<int>{0});
  EXPECT_EQ(job.space.params()[3].when[0].choices, std::vector<int>{1});
  ASSERT_EQ(job.tasks.size(), 2u);
  EXPECT_EQ(job.tasks[0].name, "year-1");
  EXPECT_EQ(job.tasks[0].budget, 30);
  EXPECT_EQ(job.total_budget(), 35);
  // Relative paths resolve against the job file's folder.
  EXPECT_EQ(*job.tasks[0].dataset, (dir_ / "data" / "year-1.csv").lexically_normal());
  EXPECT_EQ(job.objective.command[1], (dir_ / "objectives" / "train.py").lexically_normal().string());
  EXPECT_EQ(job.objective.command[2], "--data");   // not a file: kept
  EXPECT_EQ(job.objective.command[3], "{dataset}");
  EXPECT_EQ(job.source_text, kValid);
}

TEST_F(JobSpecTest, defaults_apply_to_optional_keys) {
  const JobSpec job = parse(R"(
[objective]
command = ["sh", "-c", "echo"]
direction = "minimize"
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "t"
budget = 3
)");
  EXPECT_EQ(job.name, "job");  // the file's stem
  EXPECT_EQ(job.seed, 0u);
  EXPECT_FALSE(job.objective.timeout_s.has_value());
  EXPECT_EQ(job.objective.retries, 0);
  EXPECT_EQ(job.workers.local_slots, usable_cores());
  EXPECT_EQ(job.objective.command[0], "sh");  // found on PATH, left for PATH lookup
  EXPECT_FALSE(job.tasks[0].dataset.has_value());
}

TEST_F(JobSpecTest, syntax_error_names_line_and_column) {
  const std::string message = error_of(valid_with("seed = 7", "seed = = 7"));
  EXPECT_NE(message.find("job.toml:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("syntax error"), std::string::npos) << message;
}

TEST_F(JobSpecTest, unknown_key_is_reported_with_a_suggestion) {
  const std::string message = error_of(valid_with("timeout_s = 600", "timout_s = 600"));
  EXPECT_NE(message.find("job.toml:7:1: objective.timout_s: unknown key; did you mean \"timeout_s\"?"),
            std::string::npos)
      << message;
  const std::string top = error_of(valid_with("seed = 7", "seed = 7\ncolour = \"red\""));
  EXPECT_NE(top.find("job.toml:3:1: colour: unknown key; allowed here:"), std::string::npos) << top;
}

TEST_F(JobSpecTest, wrong_type_names_expected_and_actual) {
  const std::string message = error_of(valid_with("retries = 1", "retries = \"one\""));
  EXPECT_NE(message.find("job.toml:8:11: objective.retries: must be an integer, not a string"),
            std::string::npos)
      << message;
  const std::string int_bound = error_of(valid_with("low = 1, high = 10", "low = 1.5, high = 10"));
  EXPECT_NE(int_bound.find("space.depth.low: must be an integer, not a float"), std::string::npos)
      << int_bound;
}

TEST_F(JobSpecTest, low_must_be_below_high) {
  const std::string message = error_of(valid_with("low = 1e-3, high = 10.0", "low = 10.0, high = 1e-3"));
  EXPECT_NE(message.find("job.toml:22:"), std::string::npos) << message;
  EXPECT_NE(message.find("space.C: low (10.0) must be < high (0.001)"), std::string::npos) << message;
  EXPECT_NE(error_of(valid_with("low = 1, high = 10", "low = 3, high = 3")).find("space.depth: low (3) must be < high (3)"),
            std::string::npos);
}

TEST_F(JobSpecTest, log_scale_needs_positive_low) {
  const std::string message = error_of(valid_with("low = 1e-3, high = 0.5", "low = 0, high = 0.5"));
  EXPECT_NE(message.find("job.toml:20:"), std::string::npos) << message;
  EXPECT_NE(message.find("space.lr: log = true needs low > 0"), std::string::npos) << message;
}

TEST_F(JobSpecTest, categorical_needs_choices) {
  const std::string empty = error_of(valid_with("choices = [\"xgboost\", \"logreg\"]", "choices = []"));
  EXPECT_NE(empty.find("job.toml:19:"), std::string::npos) << empty;
  EXPECT_NE(empty.find("space.model.choices: must be a non-empty array of strings"), std::string::npos) << empty;
  const std::string twice = error_of(valid_with("choices = [\"xgboost\", \"logreg\"]", "choices = [\"a\", \"a\"]"));
  EXPECT_NE(twice.find("space.model.choices[1]: \"a\" is listed twice"), std::string::npos) << twice;
}

TEST_F(JobSpecTest, when_must_name_a_known_parameter_and_choice) {
  const std::string unknown = error_of(valid_with("when = { model = \"logreg\" }", "when = { modle = \"logreg\" }"));
  EXPECT_NE(unknown.find("job.toml:22:"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("space.C.when.modle: no parameter is called \"modle\"; categorical parameters: \"model\""),
            std::string::npos)
      << unknown;
  const std::string value = error_of(valid_with("when = { model = \"logreg\" }", "when = { model = \"svm\" }"));
  EXPECT_NE(value.find("space.C.when.model: \"svm\" is not a choice of \"model\"; choices: \"xgboost\", \"logreg\""),
            std::string::npos)
      << value;
  const std::string numeric = error_of(valid_with("when = { model = \"logreg\" }", "when = { depth = \"3\" }"));
  EXPECT_NE(numeric.find("conditions must name a categorical parameter"), std::string::npos) << numeric;
}

TEST_F(JobSpecTest, conditions_may_not_form_a_cycle) {
  const std::string message = error_of(R"(
[objective]
command = ["sh"]
direction = "minimize"
[space]
a = { type = "categorical", choices = ["x"], when = { b = "y" } }
b = { type = "categorical", choices = ["y"], when = { a = "x" } }
[[tasks]]
name = "t"
budget = 1
)");
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
}

TEST_F(JobSpecTest, task_names_must_be_unique) {
  const std::string message = error_of(valid_with("name = \"year-2\"", "name = \"year-1\""));
  EXPECT_NE(message.find("job.toml:30:8: tasks[1].name: duplicate task name \"year-1\""), std::string::npos)
      << message;
}

TEST_F(JobSpecTest, budget_must_be_at_least_one) {
  const std::string message = error_of(valid_with("budget = 30", "budget = 0"));
  EXPECT_NE(message.find("job.toml:27:10: tasks[0].budget: must be between 1 and 100000000 (got 0)"), std::string::npos) << message;
  EXPECT_NE(error_of(valid_with("budget = 30\n", "\n")).find("tasks[0].budget: missing"), std::string::npos);
}

TEST_F(JobSpecTest, command_is_required) {
  const std::string message = error_of(valid_with(
      "command = [\"/bin/sh\", \"objectives/train.py\", \"--data\", \"{dataset}\", \"--params\", \"{params_file}\"]\n",
      ""));
  EXPECT_NE(message.find("job.toml:4:1: objective.command: missing"), std::string::npos) << message;
  const std::string empty = error_of(valid_with("[\"/bin/sh\", \"objectives/train.py\", \"--data\", \"{dataset}\", \"--params\", \"{params_file}\"]", "[]"));
  EXPECT_NE(empty.find("objective.command: must be a non-empty array of strings"), std::string::npos) << empty;
}

TEST_F(JobSpecTest, unknown_placeholder_is_reported) {
  const std::string message = error_of(valid_with("{params_file}", "{param_file}"));
  EXPECT_NE(message.find("job.toml:5:"), std::string::npos) << message;
  EXPECT_NE(message.find("objective.command[5]: unknown placeholder {param_file}; use one of {dataset}, {task}, "
                         "{trial}, {params_file}, {workdir}"),
            std::string::npos)
      << message;
}

TEST_F(JobSpecTest, program_must_exist) {
  const std::string on_path = error_of(valid_with("\"/bin/sh\", \"objectives", "\"no-such-program-lbo\", \"objectives"));
  EXPECT_NE(on_path.find("objective.command[0]: \"no-such-program-lbo\" is not found on PATH"), std::string::npos)
      << on_path;
  const std::string relative = error_of(valid_with("\"/bin/sh\", \"objectives", "\"bin/run\", \"objectives"));
  EXPECT_NE(relative.find("objective.command[0]: \"bin/run\""), std::string::npos) << relative;
}

TEST_F(JobSpecTest, datasets_must_exist_and_be_given_when_used) {
  const std::string missing = error_of(valid_with("data/year-1.csv", "data/year-9.csv"));
  EXPECT_NE(missing.find("tasks[0].dataset: \"data/year-9.csv\" does not exist"), std::string::npos) << missing;
  const std::string absent = error_of(valid_with("dataset = \"data/year-1.csv\"\n", ""));
  EXPECT_NE(absent.find("tasks[0].dataset: missing; objective.command uses {dataset}"), std::string::npos) << absent;
}

TEST_F(JobSpecTest, direction_and_surrogate_are_checked) {
  EXPECT_NE(error_of(valid_with("\"maximize\"", "\"max\"")).find("objective.direction: \"max\" is neither"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("direction = \"maximize\"\n", "")).find("objective.direction: missing"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("\"random\"", "\"gpp\"")).find("policy.surrogate: \"gpp\""), std::string::npos);
}

TEST_F(JobSpecTest, checkpoint_and_grace_periods) {
  const JobSpec defaults = parse(kValid);
  EXPECT_EQ(defaults.checkpoint_every_s, 60.0);
  EXPECT_EQ(defaults.grace_s, 30.0);
  const JobSpec set = parse(valid_with("seed = 7", "seed = 7\ncheckpoint_every_s = 5\ngrace_s = 0"));
  EXPECT_EQ(set.checkpoint_every_s, 5.0);
  EXPECT_EQ(set.grace_s, 0.0);
  EXPECT_NE(error_of(valid_with("seed = 7", "seed = 7\ncheckpoint_every_s = 0")).find("job.toml:3:22: checkpoint_every_s: must be a number of seconds between 0.1 and 1e9 (got 0)"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("seed = 7", "seed = 7\ngrace_s = -1")).find("grace_s: must be a number of seconds between 0 and 1e9 (got -1.0)"),
            std::string::npos);
}

TEST_F(JobSpecTest, policy_knobs_parse_and_are_checked) {
  const JobSpec job = parse(valid_with("surrogate = \"random\"", R"(surrogate = "ablr"
acquisition = "hedge"
ucb_beta = 2.5
ucb_scale = 0.5
xi = 0.1
hedge_eta = 3
candidates = 200
refine = 2
fit_threads = 3
transfer_best = 1
transfer_best_choice = "recent"
network_width = 32
network_depth = 2
networks = 4
ibp_alpha = 1.5)"));
  EXPECT_EQ(job.policy.surrogate, SurrogateKind::ablr);
  EXPECT_EQ(job.policy.acquisition, AcquisitionKind::hedge);
  EXPECT_EQ(job.policy.ucb_beta, 2.5);
  EXPECT_EQ(job.policy.ucb_scale, 0.5);
  EXPECT_EQ(job.policy.xi, 0.1);
  EXPECT_EQ(job.policy.hedge_eta, 3.0);
  EXPECT_EQ(job.policy.candidates, 200);
  EXPECT_EQ(job.policy.refine, 2);
  EXPECT_EQ(job.policy.fit_threads, 3);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "fit_threads = 0")).find("policy.fit_threads: must be in 1..1024"),
            std::string::npos);
  EXPECT_EQ(job.policy.transfer_best, 1);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "transfer_best = -1")).find("policy.transfer_best: must be in 0..1000000"),
            std::string::npos);
  EXPECT_EQ(job.policy.transfer_best_choice, TransferBestChoice::recent);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "transfer_best_choice = \"best\""))
                .find("policy.transfer_best_choice: \"best\" is not a choice; use \"recent\" or \"portfolio\""),
            std::string::npos);
  EXPECT_EQ(job.policy.network_width, 32);
  EXPECT_EQ(job.policy.network_depth, 2);
  EXPECT_EQ(job.policy.networks, 4);
  EXPECT_EQ(job.policy.ibp_alpha, 1.5);
  const JobSpec defaults = parse(valid_with("surrogate = \"random\"\n", ""));
  EXPECT_EQ(defaults.policy.surrogate, SurrogateKind::lbo);
  EXPECT_EQ(defaults.policy.networks, 10);
  EXPECT_EQ(defaults.policy.ibp_alpha, 2.0);
  EXPECT_FALSE(defaults.policy.fit_threads.has_value());
  EXPECT_FALSE(defaults.policy.transfer_best.has_value());
  EXPECT_EQ(defaults.policy.transfer_best_choice, TransferBestChoice::portfolio);
  EXPECT_EQ(parse(valid_with("\"random\"", "\"lbo\"")).policy.surrogate, SurrogateKind::lbo);
  EXPECT_EQ(defaults.policy.acquisition, AcquisitionKind::ei);
  EXPECT_FALSE(defaults.policy.ucb_beta.has_value());
  EXPECT_FALSE(parse(valid_with("surrogate = \"random\"", "ucb_beta = \"schedule\"")).policy.ucb_beta.has_value());

  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "acquisition = \"gpucb\"")).find("policy.acquisition: \"gpucb\" is not an acquisition"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "ucb_beta = -1")).find("policy.ucb_beta: must be \"schedule\" or a number > 0"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "ucb_delta = 1.5")).find("policy.ucb_delta: must be in (0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "hedge_eta = 0")).find("policy.hedge_eta: must be a number > 0"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(parse(kValid).policy.hedge_memory, 0.5);
  EXPECT_DOUBLE_EQ(parse(valid_with("surrogate = \"random\"", "hedge_memory = 0")).policy.hedge_memory, 0.0);
  for (const char* bad : {"hedge_memory = 1.5", "hedge_memory = -0.1", "hedge_memory = nan"}) {
    EXPECT_NE(error_of(valid_with("surrogate = \"random\"", bad)).find("policy.hedge_memory: must be in [0, 1]"),
              std::string::npos) << bad;
  }
  EXPECT_NE(error_of(valid_with("\"random\"", "\"dngo\"")).find("policy.surrogate: \"dngo\" is not a surrogate"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("surrogate = \"random\"", "networks = 0")).find("policy.networks: must be in 1..100"),
            std::string::npos);
}

TEST_F(JobSpecTest, parameter_names_may_not_shadow_result_columns) {
  const std::string message = error_of(valid_with("depth = {", "status = {"));
  EXPECT_NE(message.find("space.status: the name is taken by a results.csv column"), std::string::npos) << message;
}

TEST_F(JobSpecTest, every_problem_is_reported_at_once) {
  std::string text = valid_with("budget = 30", "budget = 0");
  text = with(text, "retries = 1", "retries = -1");
  text = with(text, "low = 1, high = 10", "low = 10, high = 1");
  const std::string message = error_of(text);
  EXPECT_NE(message.find("tasks[0].budget"), std::string::npos) << message;
  EXPECT_NE(message.find("objective.retries"), std::string::npos) << message;
  EXPECT_NE(message.find("space.depth"), std::string::npos) << message;
}

TEST_F(JobSpecTest, tasks_must_be_an_array_of_tables) {
  const std::string one_task = kValid.substr(0, kValid.find("\n[[tasks]]\nname = \"year-2\""));
  const std::string message = error_of(with(one_task, "[[tasks]]", "[tasks]"));
  EXPECT_NE(message.find("must be an array of tables"), std::string::npos) << message;
}

TEST(JobFileTest, unreadable_file_is_an_input_error) {
  EXPECT_THROW(load_job_file("/nonexistent/lbo/job.toml"), lbo::InputError);
}

TEST(JobFileTest, names_are_checked) {
  EXPECT_TRUE(is_valid_name("year-1_v2.0"));
  EXPECT_FALSE(is_valid_name(""));
  EXPECT_FALSE(is_valid_name(".hidden"));
  EXPECT_FALSE(is_valid_name("a/b"));
  EXPECT_FALSE(is_valid_name("a b"));
}

TEST_F(JobSpecTest, schedule_table_parses_and_is_checked) {
  fs::create_directories(dir_ / "incoming");
  const JobSpec job = parse(valid_with("[workers]", R"([schedule]
watch = "incoming/"
default_budget = 12
concurrent_tasks = 3
idle_timeout_s = 60
[workers])"));
  EXPECT_EQ(job.schedule.watch, (dir_ / "incoming/").lexically_normal());
  EXPECT_EQ(job.schedule.default_budget, 12);
  EXPECT_EQ(job.schedule.concurrent_tasks, 3);
  EXPECT_EQ(job.schedule.idle_timeout_s, 60.0);
  const JobSpec defaults = parse(kValid);
  EXPECT_FALSE(defaults.schedule.watch.has_value());
  EXPECT_EQ(defaults.schedule.default_budget, 20);
  EXPECT_EQ(defaults.schedule.concurrent_tasks, 1);
  EXPECT_EQ(defaults.schedule.idle_timeout_s, 0.0);
  const std::string message =
      error_of(valid_with("[workers]", "[schedule]\nwatch = \"nowhere/\"\nconcurrent_tasks = 0\nidle_timeout_s = -1\n[workers]"));
  EXPECT_NE(message.find("schedule.watch: \"nowhere/\" is not a folder (looked for " + (dir_ / "nowhere/").string() + ")"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("schedule.concurrent_tasks: must be in 1..100000"), std::string::npos) << message;
  EXPECT_NE(message.find("schedule.idle_timeout_s: must be a number of seconds between 0 and 1e9 (got -1.0)"), std::string::npos) << message;
  // Tasks may all come from the watched folder; without one they are required.
  const std::string no_tasks = kValid.substr(0, kValid.find("\n[[tasks]]"));
  EXPECT_TRUE(parse(with(no_tasks, "[workers]", "[schedule]\nwatch = \"incoming\"\n[workers]")).tasks.empty());
  EXPECT_NE(error_of(no_tasks).find("tasks: missing"), std::string::npos);
}

TEST_F(JobSpecTest, jumbo_parses_with_ucb_by_default_and_its_threshold_checked) {
  const std::string random_design = "surrogate = \"random\"\ninitial_random = 5";
  const JobSpec jumbo = parse(valid_with(random_design, "surrogate = \"jumbo\""));
  EXPECT_EQ(jumbo.policy.surrogate, SurrogateKind::jumbo);
  EXPECT_EQ(jumbo.policy.acquisition, AcquisitionKind::ucb);
  EXPECT_EQ(jumbo.policy.jumbo_threshold, 0.1);
  EXPECT_EQ(to_string(SurrogateKind::jumbo), "jumbo");
  const JobSpec ei = parse(valid_with(random_design, "surrogate = \"jumbo\"\nacquisition = \"ei\"\njumbo_threshold = 0.5"));
  EXPECT_EQ(ei.policy.acquisition, AcquisitionKind::ei);
  EXPECT_EQ(ei.policy.jumbo_threshold, 0.5);
  EXPECT_TRUE(std::isinf(parse(valid_with(random_design, "surrogate = \"jumbo\"\njumbo_threshold = inf")).policy.jumbo_threshold));
  EXPECT_EQ(parse(valid_with(random_design, "surrogate = \"gp\"")).policy.acquisition, AcquisitionKind::ei);
  for (const char* bad : {"jumbo_threshold = -0.1", "jumbo_threshold = nan", "jumbo_threshold = \"big\""}) {
    EXPECT_NE(error_of(valid_with(random_design, std::string("surrogate = \"jumbo\"\n") + bad)).find("policy.jumbo_threshold: must be"),
              std::string::npos)
        << bad;
  }
  EXPECT_TRUE(jumbo.policy.jumbo_cold_switch);
  EXPECT_FALSE(parse(valid_with(random_design, "surrogate = \"jumbo\"\njumbo_cold_switch = false")).policy.jumbo_cold_switch);
  EXPECT_NE(error_of(valid_with(random_design, "jumbo_cold_switch = \"yes\"")).find("policy.jumbo_cold_switch: must be true or false"),
            std::string::npos);
  EXPECT_FALSE(jumbo.policy.max_fit_results);
  EXPECT_EQ(parse(valid_with(random_design, "max_fit_results = 2000")).policy.max_fit_results, 2000);
  EXPECT_NE(error_of(valid_with(random_design, "max_fit_results = 5")).find("policy.max_fit_results: must be in 10..1000000"),
            std::string::npos);
  EXPECT_EQ(jumbo.policy.output_warping, lbo::jobs::OutputWarping::none);  // not measured with a warping
  // lbo's default: measured to help its transfer and the Branin sequences; gp's: none, measured
  // to cost with the half copula on single-task synthetic cases (bench/README.md).
  EXPECT_EQ(parse(valid_with(random_design, "surrogate = \"lbo\"")).policy.output_warping,
            lbo::jobs::OutputWarping::yeo_johnson);
  EXPECT_EQ(parse(valid_with(random_design, "surrogate = \"gp\"")).policy.output_warping, lbo::jobs::OutputWarping::none);
  EXPECT_EQ(parse(valid_with(random_design, "surrogate = \"lbo\"\noutput_warping = \"none\"")).policy.output_warping,
            lbo::jobs::OutputWarping::none);
  EXPECT_EQ(parse(valid_with(random_design, "output_warping = \"none\"")).policy.output_warping, lbo::jobs::OutputWarping::none);
  EXPECT_EQ(parse(valid_with(random_design, "output_warping = \"copula\"")).policy.output_warping, lbo::jobs::OutputWarping::copula);
  EXPECT_EQ(parse(valid_with(random_design, "output_warping = \"copula_below_median\"")).policy.output_warping,
            lbo::jobs::OutputWarping::copula_below_median);
  EXPECT_EQ(parse(valid_with(random_design, "output_warping = \"yeo_johnson\"")).policy.output_warping,
            lbo::jobs::OutputWarping::yeo_johnson);
  EXPECT_NE(error_of(valid_with(random_design, "output_warping = \"log\"")).find(
                "policy.output_warping: \"log\" is not a warping; use \"none\", \"copula\", \"copula_below_median\" or \"yeo_johnson\""),
            std::string::npos);
  EXPECT_NE(error_of(valid_with(random_design, "surrogate = \"jumbo2\"")).find("use \"lbo\", \"gp\", \"ablr\", \"libo\", \"jumbo\" or \"random\""),
            std::string::npos);
}

TEST_F(JobSpecTest, libo_forced_exploration_and_warm_start_parse) {
  const JobSpec libo = parse(valid_with("initial_random = 5", "initial_random = \"libo\""));
  EXPECT_TRUE(libo.policy.libo_exploration);
  // surrogate = "libo": forced exploration unless initial_random says otherwise.
  const std::string random_design = "surrogate = \"random\"\ninitial_random = 5";
  const JobSpec model = parse(valid_with(random_design, "surrogate = \"libo\""));
  EXPECT_EQ(model.policy.surrogate, SurrogateKind::libo);
  EXPECT_TRUE(model.policy.libo_exploration);
  const JobSpec fixed = parse(valid_with(random_design, "surrogate = \"libo\"\ninitial_random = 3"));
  EXPECT_FALSE(fixed.policy.libo_exploration);
  EXPECT_EQ(fixed.policy.initial_random, 3);
  EXPECT_FALSE(parse(valid_with(random_design, "surrogate = \"gp\"")).policy.libo_exploration);
  EXPECT_TRUE(model.policy.libo_full_share);
  EXPECT_FALSE(parse(valid_with(random_design, "surrogate = \"libo\"\nlibo_full_share = false")).policy.libo_full_share);
  EXPECT_TRUE(model.policy.libo_gp_switch);
  EXPECT_FALSE(parse(valid_with(random_design, "surrogate = \"libo\"\nlibo_gp_switch = false")).policy.libo_gp_switch);
  EXPECT_NE(error_of(valid_with(random_design, "libo_gp_switch = 0")).find("policy.libo_gp_switch: must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with(random_design, "libo_full_share = 1")).find("policy.libo_full_share: must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("initial_random = 5", "initial_random = \"lots\"")).find("policy.initial_random: must be a number >= 0 or \"libo\""),
            std::string::npos);
  // ceil(sqrt(n) / s^¼): n = 16 gives 4 for the first task, 2 for the 16th; n = 50, s = 5: 5.
  EXPECT_EQ(libo_initial_random(16, 1), 4);
  EXPECT_EQ(libo_initial_random(16, 16), 2);
  EXPECT_EQ(libo_initial_random(50, 1), 8);
  EXPECT_EQ(libo_initial_random(50, 5), 5);
  EXPECT_EQ(libo_initial_random(1, 100), 1);

  // Whether a warm-start folder holds a run is checked where runs are known (load_warm_start);
  // the job keeps where each entry is written for that error.
  const JobSpec warm = parse(valid_with("initial_random = 5", "warm_start = [\"runs/older\"]"));
  ASSERT_EQ(warm.policy.warm_start.size(), 1u);
  EXPECT_EQ(warm.policy.warm_start[0], (dir_ / "runs" / "older").lexically_normal());
  ASSERT_EQ(warm.policy.warm_start_places.size(), 1u);
  EXPECT_NE(warm.policy.warm_start_places[0].find("job.toml:"), std::string::npos) << warm.policy.warm_start_places[0];
  EXPECT_NE(warm.policy.warm_start_places[0].find(": policy.warm_start[0]"), std::string::npos) << warm.policy.warm_start_places[0];
  const std::string message = error_of(valid_with("initial_random = 5", "warm_start = [\"runs/missing\", 3]"));
  EXPECT_NE(message.find("policy.warm_start[1]: must be a string naming a run directory or a CSV file"), std::string::npos) << message;
}

TEST(JobFileTest, dataset_files_name_tasks) {
  EXPECT_EQ(task_name_for("/data/incoming/flchain-2004.csv"), "flchain-2004");
  EXPECT_EQ(task_name_for("/data/incoming/year 2004 (final).csv"), "year_2004__final_");
  EXPECT_EQ(task_name_for("/data/.x"), "x");
  EXPECT_TRUE(is_valid_name(task_name_for("/data/ü.csv")));
  EXPECT_EQ(default_budget_in("[schedule]\ndefault_budget = 7\n"), 7);
  EXPECT_FALSE(default_budget_in("name = \"x\"\n").has_value());
  EXPECT_FALSE(default_budget_in("not toml [").has_value());
}

TEST_F(JobSpecTest, stepwise_objectives_and_the_residual_and_transfer_gp_switches_parse) {
  const JobSpec stepwise = parse(valid_with("retries = 1", "retries = 1\nstepwise = 4"));
  EXPECT_EQ(stepwise.objective.stepwise, 4);
  EXPECT_EQ(parse(kValid).objective.stepwise, 0);
  EXPECT_NE(error_of(valid_with("retries = 1", "stepwise = 0")).find("objective.stepwise: must be in 1..1000"), std::string::npos);
  // step_1..step_T are results.csv columns of a stepwise run; step_5 is free when T = 4.
  const std::string taken = error_of(with(valid_with("retries = 1", "stepwise = 4"), "C     =", "step_2 ="));
  EXPECT_NE(taken.find("space.step_2: the name is taken by a results.csv column of objective.stepwise"), std::string::npos)
      << taken;
  EXPECT_NO_THROW(parse(with(valid_with("retries = 1", "stepwise = 4"), "C     =", "step_5 =")));

  EXPECT_FALSE(parse(kValid).policy.residual_gp.has_value());
  EXPECT_EQ(parse(valid_with("initial_random = 5", "residual_gp = false")).policy.residual_gp, false);
  EXPECT_NE(error_of(valid_with("initial_random = 5", "residual_gp = 1")).find("policy.residual_gp: must be true or false"),
            std::string::npos)
      << error_of(valid_with("initial_random = 5", "residual_gp = 1"));
  EXPECT_FALSE(parse(kValid).policy.transfer_gp.has_value());
  EXPECT_EQ(parse(valid_with("initial_random = 5", "transfer_gp = false")).policy.transfer_gp, false);
  EXPECT_NE(error_of(valid_with("initial_random = 5", "transfer_gp = \"yes\"")).find("policy.transfer_gp: must be true or false"),
            std::string::npos);
}

TEST_F(JobSpecTest, per_trial_resources_parse_and_are_checked) {
  const JobSpec defaults = parse(kValid);
  EXPECT_FALSE(defaults.workers.threads_per_trial.has_value());
  EXPECT_EQ(defaults.workers.gpus_per_trial, 0);
  EXPECT_TRUE(defaults.workers.gpus.empty());

  const JobSpec job = parse(valid_with("local_slots = 2\nslots_per_rank = 1", R"(slots_per_rank = "auto"
threads_per_trial = 4
gpus_per_trial = 2
gpus = [0, 1, "GPU-8e2f"])"));
  EXPECT_FALSE(job.workers.slots_per_rank.has_value()) << "auto";
  EXPECT_EQ(job.workers.threads_per_trial, std::optional<int>(4));
  EXPECT_EQ(job.workers.gpus_per_trial, 2);
  EXPECT_EQ(job.workers.gpus, (std::vector<std::string>{"0", "1", "GPU-8e2f"}));
  // local_slots unset: the usable cores divided among 4-thread trials.
  EXPECT_TRUE(job.workers.local_slots_auto);
  EXPECT_EQ(job.workers.local_slots, std::max(usable_cores() / 4, 1));
  EXPECT_EQ(parse(valid_with("local_slots = 2", "local_slots = \"auto\"")).workers.local_slots, usable_cores());

  const std::string message = error_of(valid_with("local_slots = 2\nslots_per_rank = 1", R"(local_slots = "all"
slots_per_rank = 0
threads_per_trial = 0
gpus_per_trial = -1
gpus = [0, 0, "a,b", -2])"));
  for (const char* expected : {"workers.local_slots: must be a number or \"auto\", not \"all\"",
                               "workers.slots_per_rank: must be in 1..4096 or \"auto\" (got 0)",
                               "workers.threads_per_trial: must be in 1..4096 (got 0)",
                               "workers.gpus_per_trial: must be in 0..1024 (got -1)",
                               "workers.gpus: device 0 is listed twice",
                               "workers.gpus: each device must be an integer >= 0 or a non-empty string without commas"}) {
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
  }
  EXPECT_NE(error_of(valid_with("local_slots = 2", "gpus = \"0,1\"")).find("job.toml:"), std::string::npos);
}

// Issue 18: how long a rank may be silent before it is taken for lost.
TEST_F(JobSpecTest, rank_timeout_is_checked) {
  EXPECT_EQ(parse(kValid).workers.rank_timeout_s, 120);
  EXPECT_EQ(parse(valid_with("local_slots = 2", "local_slots = 2\nrank_timeout_s = 2.5")).workers.rank_timeout_s, 2.5);
  for (const char* bad : {"0.5", "1e9", "nan", "\"60\""}) {
    const std::string message = error_of(valid_with("local_slots = 2", "local_slots = 2\nrank_timeout_s = " + std::string(bad)));
    EXPECT_NE(message.find("workers.rank_timeout_s: must be"), std::string::npos) << bad << "\n" << message;
    EXPECT_NE(message.find("job.toml:"), std::string::npos) << message;
  }
}

// Issue 18: edge inputs that validated and then failed at run time.
TEST_F(JobSpecTest, int_bounds_beyond_two_to_the_53_are_refused_and_printed_as_integers) {
  const std::string depth = "depth = { type = \"int\", low = 1, high = 10, when = { model = \"xgboost\" } }";
  const std::string extremes = error_of(
      valid_with(depth, "depth = { type = \"int\", low = -9223372036854775808, high = 9223372036854775807 }"));
  EXPECT_NE(extremes.find("job.toml:21:31: space.depth: int bounds must lie within -9007199254740992 and 9007199254740992"),
            std::string::npos)
      << extremes;
  EXPECT_NE(extremes.find("got -9223372036854775808 to 9223372036854775807"), std::string::npos) << extremes;
  // One apart near the top: refused for the range, not as "low (9.22337e+18) must be < high (9.22337e+18)".
  const std::string neighbours = error_of(
      valid_with(depth, "depth = { type = \"int\", low = 9223372036854775806, high = 9223372036854775807 }"));
  EXPECT_NE(neighbours.find("space.depth: int bounds must lie within"), std::string::npos) << neighbours;
  EXPECT_EQ(neighbours.find("e+18"), std::string::npos) << neighbours;
  const std::string equal =
      error_of(valid_with(depth, "depth = { type = \"int\", low = 9223372036854775807, high = 9223372036854775807 }"));
  EXPECT_NE(equal.find("space.depth: low (9223372036854775807) must be < high (9223372036854775807)"), std::string::npos)
      << equal;
  const JobSpec widest =
      parse(valid_with(depth, "depth = { type = \"int\", low = -9007199254740992, high = 9007199254740992 }"));
  EXPECT_EQ(widest.space.params()[2].low, -9007199254740992.0);
  EXPECT_EQ(widest.space.params()[2].high, 9007199254740992.0);
}

TEST_F(JobSpecTest, budgets_above_the_cap_name_the_range) {
  const std::string message = error_of(valid_with("budget = 30", "budget = 100000001"));
  EXPECT_NE(message.find("job.toml:27:10: tasks[0].budget: must be between 1 and 100000000 (got 100000001)"),
            std::string::npos)
      << message;
  fs::create_directories(dir_ / "incoming");
  const std::string schedule =
      error_of(valid_with("[workers]", "[schedule]\nwatch = \"incoming\"\ndefault_budget = 100000001\n[workers]"));
  EXPECT_NE(schedule.find("schedule.default_budget: must be between 1 and 100000000 (got 100000001)"), std::string::npos)
      << schedule;
}

TEST_F(JobSpecTest, periods_are_checked_for_nan_tiny_and_huge_values) {
  for (const std::string value : {"nan", "1e-300", "0.01", "inf", "1e10"}) {
    const std::string message = error_of(valid_with("seed = 7", "seed = 7\ncheckpoint_every_s = " + value));
    EXPECT_NE(message.find("job.toml:3:22: checkpoint_every_s: must be a number of seconds between 0.1 and 1e9"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(parse(valid_with("seed = 7", "seed = 7\ncheckpoint_every_s = 0.1")).checkpoint_every_s, 0.1);
  // The same rule for --checkpoint-every.
  EXPECT_EQ(checkpoint_every_problem(0.1), "");
  EXPECT_EQ(checkpoint_every_problem(1e9), "");
  EXPECT_NE(checkpoint_every_problem(std::nan("")), "");
  EXPECT_NE(checkpoint_every_problem(1e-300), "");
  EXPECT_NE(checkpoint_every_problem(2e9), "");
  // Longer than the timers' nanoseconds hold.
  EXPECT_NE(error_of(valid_with("timeout_s = 600", "timeout_s = inf"))
                .find("objective.timeout_s: must be a number of seconds > 0 and <= 1e9 (got inf); leave it out for no limit"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("seed = 7", "seed = 7\ngrace_s = 1e300")).find("grace_s: must be a number of seconds between 0 and 1e9"),
            std::string::npos);
  EXPECT_NE(error_of(valid_with("retries = 1", "retries = 1\nkill_grace_s = inf")).find("objective.kill_grace_s: must be"),
            std::string::npos);
}

TEST_F(JobSpecTest, a_job_file_that_is_no_regular_file_or_too_big_is_refused_before_reading) {
  try {
    load_job_file(dir_);
    ADD_FAILURE() << "a folder loaded";
  } catch (const lbo::InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir_.string() + ": not a regular file but a folder; name the job's TOML file");
  }
  try {
    load_job_file("/dev/zero");  // read whole, it grows memory without bound
    ADD_FAILURE() << "/dev/zero loaded";
  } catch (const lbo::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: not a regular file; name the job's TOML file");
  }
  const fs::path big = dir_ / "big.toml";
  {
    std::ofstream out(big);
    out << kValid << "#";
    out << std::string(kMaxJobFileBytes, 'x') << "\n";
  }
  try {
    load_job_file(big);
    ADD_FAILURE() << "a file over the limit loaded";
  } catch (const lbo::InputError& e) {
    EXPECT_EQ(std::string(e.what()), big.string() + ": larger than 16 MiB; is it the job file (a TOML file of a few kilobytes)?");
  }
  std::ofstream(dir_ / "job.toml") << kValid;
  EXPECT_EQ(load_job_file(dir_ / "job.toml").name, "quickstart");
}

TEST_F(JobSpecTest, a_script_whose_interpreter_is_missing_is_refused) {
  const fs::path script = dir_ / "objectives" / "train.sh";
  std::ofstream(script) << "#!/usr/bin/pyhton3 -u\nprint(1)\n";
  fs::permissions(script, fs::perms::owner_all);
  const std::string command = "command = [\"/bin/sh\", \"objectives/train.py\"";
  const std::string message = error_of(valid_with(command, "command = [\"objectives/train.sh\""));
  EXPECT_NE(message.find("job.toml:5:12: objective.command[0]: \"train.sh\": its #! interpreter /usr/bin/pyhton3 does not "
                         "exist; fix its first line"),
            std::string::npos)
      << message;
  EXPECT_EQ(interpreter_problem(script.string()), "its #! interpreter /usr/bin/pyhton3 does not exist");
  std::ofstream(script) << "#! /bin/sh\necho '{\"objective\": 1}'\n";
  EXPECT_EQ(interpreter_problem(script.string()), std::nullopt);
  EXPECT_EQ(parse(valid_with(command, "command = [\"objectives/train.sh\"")).objective.command[0], script.string());
  std::ofstream(script) << "#!" << (dir_ / "data" / "year-1.csv").string() << "\n";  // exists, cannot run
  EXPECT_NE(interpreter_problem(script.string())->find("is not an executable file"), std::string::npos);
  EXPECT_EQ(interpreter_problem("/bin/sh"), std::nullopt);  // a binary
  EXPECT_EQ(interpreter_problem("sh"), std::nullopt);       // found on PATH
  // Through env: the name is looked up on PATH, as env will.
  std::ofstream(script) << "#!/usr/bin/env pyhton3\nprint(1)\n";
  EXPECT_EQ(interpreter_problem(script.string()), "its #! line runs pyhton3 through env, and no pyhton3 is on PATH");
  std::ofstream(script) << "#!/usr/bin/env sh\necho\n";
  EXPECT_EQ(interpreter_problem(script.string()), std::nullopt);
  std::ofstream(script) << "#!/usr/bin/env -S sh -e\necho\n";
  EXPECT_EQ(interpreter_problem(script.string()), std::nullopt);
}

TEST_F(JobSpecTest, watch_pattern_defaults_to_csv_and_is_checked) {
  fs::create_directories(dir_ / "incoming");
  const auto schedule = [](const std::string& keys) { return "[schedule]\n" + keys + "\n[workers]"; };
  EXPECT_EQ(parse(valid_with("[workers]", schedule("watch = \"incoming\""))).schedule.watch_pattern, "*.csv");
  EXPECT_EQ(parse(valid_with("[workers]", schedule("watch = \"incoming\"\nwatch_pattern = \"year-*.parquet\"")))
                .schedule.watch_pattern,
            "year-*.parquet");
  const std::string slash = error_of(valid_with("[workers]", schedule("watch = \"incoming\"\nwatch_pattern = \"a/*.csv\"")));
  EXPECT_NE(slash.find("job.toml:16:17: schedule.watch_pattern: must be a glob over file names without '/'"),
            std::string::npos)
      << slash;
  const std::string alone = error_of(valid_with("[workers]", schedule("watch_pattern = \"*.txt\"")));
  EXPECT_NE(alone.find("schedule.watch_pattern: needs watch, the folder to watch; add it"), std::string::npos) << alone;
}

TEST_F(JobSpecTest, early_stopping_reads_its_rule_and_rungs) {
  const JobSpec none = parse(kValid);
  EXPECT_FALSE(none.early_stopping);
  // The default rule is hyperband, with every bracket whose first rung is below max_step (1,
  // 3, 9) and the one that runs each trial to the end.
  const JobSpec plain = parse(valid_with("[space]", "[early_stopping]\nstep_name = \"epoch\"\nmax_step = 27\n\n[space]"));
  ASSERT_TRUE(plain.early_stopping);
  EXPECT_EQ(plain.early_stopping->rule, StoppingRule::hyperband);
  EXPECT_EQ(plain.early_stopping->brackets, 4);
  const JobSpec asha =
      parse(valid_with("[space]", "[early_stopping]\nrule = \"asha\"\nstep_name = \"epoch\"\nmax_step = 27\n\n[space]"));
  ASSERT_TRUE(asha.early_stopping);
  EXPECT_EQ(asha.early_stopping->rule, StoppingRule::asha);
  EXPECT_EQ(asha.early_stopping->step_name, "epoch");
  EXPECT_EQ(asha.early_stopping->min_step, 1);
  EXPECT_EQ(asha.early_stopping->eta, 3);
  EXPECT_EQ(asha.early_stopping->brackets, 1);
  EXPECT_EQ(asha.early_stopping->rungs(0), (std::vector<std::int64_t>{1, 3, 9}));
  // Hyperband's brackets default to every first rung below max_step and the full bracket.
  const JobSpec hyperband =
      parse(valid_with("[space]", "[early_stopping]\nrule = \"hyperband\"\nmin_step = 2\nmax_step = 50\neta = 2\n\n[space]"));
  ASSERT_TRUE(hyperband.early_stopping);
  EXPECT_EQ(hyperband.early_stopping->brackets, 6);  // 2, 4, 8, 16, 32 below 50, and the full run
  EXPECT_EQ(hyperband.early_stopping->rungs(0), (std::vector<std::int64_t>{2, 4, 8, 16, 32}));
  EXPECT_EQ(hyperband.early_stopping->rungs(3), (std::vector<std::int64_t>{16, 32}));
  EXPECT_TRUE(hyperband.early_stopping->rungs(5).empty());
  const JobSpec median = parse(valid_with("[space]", "[early_stopping]\nrule = \"median\"\nmax_step = 10\nmin_trials = 3\n\n[space]"));
  ASSERT_TRUE(median.early_stopping);
  EXPECT_EQ(median.early_stopping->min_trials, 3);
  EXPECT_EQ(median.early_stopping->mode, StoppingMode::stop);
  EXPECT_EQ(median.early_stopping->model, lbo::jobs::CurveModel::last);
  EXPECT_EQ(asha.early_stopping->model, lbo::jobs::CurveModel::last);
}

TEST_F(JobSpecTest, early_stopping_model_learns_at_bracket_zeros_rungs_and_max_step) {
  const JobSpec job = parse(valid_with(
      "[space]", "[early_stopping]\nrule = \"hyperband\"\nmax_step = 27\nmodel = \"rungs\"\n\n[space]"));
  ASSERT_TRUE(job.early_stopping);
  EXPECT_EQ(job.early_stopping->model, lbo::jobs::CurveModel::rungs);
  EXPECT_EQ(job.early_stopping->model_steps(), (std::vector<std::int64_t>{1, 3, 9, 27}));
  const JobSpec bohb = parse(valid_with(
      "[space]", "[early_stopping]\nmin_step = 2\nmax_step = 20\nmodel = \"highest_rung\"\n\n[space]"));
  ASSERT_TRUE(bohb.early_stopping);
  EXPECT_EQ(bohb.early_stopping->model, lbo::jobs::CurveModel::highest_rung);
  EXPECT_EQ(bohb.early_stopping->model_steps(), (std::vector<std::int64_t>{2, 6, 18, 20}));
}

TEST_F(JobSpecTest, early_stopping_promotion_mode_runs_each_attempt_to_its_next_rung) {
  const JobSpec job =
      parse(valid_with("[space]", "[early_stopping]\nrule = \"hyperband\"\nmax_step = 27\nmode = \"promotion\"\n\n[space]"));
  ASSERT_TRUE(job.early_stopping);
  const EarlyStoppingSpec& e = *job.early_stopping;
  EXPECT_EQ(e.mode, StoppingMode::promotion);
  // Bracket 0: rungs 1, 3, 9; an attempt resumed after step s runs to the first rung past s.
  EXPECT_EQ(e.target_step(0, 0), 1);
  EXPECT_EQ(e.target_step(0, 1), 3);
  EXPECT_EQ(e.target_step(0, 2), 3);  // it reported past rung 1 before it was paused
  EXPECT_EQ(e.target_step(0, 9), 27);
  // Bracket 2 starts at 9; bracket 3 runs every trial to max_step at once.
  EXPECT_EQ(e.target_step(2, 0), 9);
  EXPECT_EQ(e.target_step(3, 0), 27);
  EXPECT_EQ(e.keep_checkpoints, EarlyStoppingSpec::KeepCheckpoints::best);
  const JobSpec all = parse(valid_with(
      "[space]", "[early_stopping]\nmax_step = 27\nmode = \"promotion\"\nkeep_checkpoints = \"all\"\n\n[space]"));
  EXPECT_EQ(all.early_stopping->keep_checkpoints, EarlyStoppingSpec::KeepCheckpoints::all);
}

TEST_F(JobSpecTest, early_stopping_errors_name_the_key_and_the_fix) {
  const auto table = [&](const std::string& body) { return error_of(valid_with("[space]", "[early_stopping]\n" + body + "\n[space]")); };
  EXPECT_NE(table("rule = \"bohb\"\nmax_step = 9").find("early_stopping.rule: must be \"asha\", \"hyperband\", \"median\" or \"predictive\""),
            std::string::npos);
  EXPECT_NE(table("min_step = 3").find("early_stopping.max_step: missing; add it"), std::string::npos);
  EXPECT_NE(table("min_step = 9\nmax_step = 9").find("early_stopping.max_step: must be greater than min_step (9)"),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\neta = 1").find("early_stopping.eta: must be an integer between 2 and 100 (got 1)"),
            std::string::npos);
  EXPECT_NE(table("rule = \"asha\"\nmax_step = 9\nbrackets = 2").find("early_stopping.brackets: is for rule = \"hyperband\""), std::string::npos);
  EXPECT_NE(table("rule = \"hyperband\"\nmax_step = 9\nbrackets = 4").find("early_stopping.brackets: must be between 1 and 3"),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\nmin_trials = 2").find("early_stopping.min_trials: is for rule = \"median\""),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\nmode = \"pause\"").find("early_stopping.mode: must be \"stop\" or \"promotion\", not \"pause\""),
            std::string::npos);
  EXPECT_NE(table("rule = \"median\"\nmax_step = 9\nmode = \"promotion\"")
                .find("early_stopping.mode: \"promotion\" is for rule = \"asha\", \"hyperband\" or \"predictive\""),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\nmodel = \"mobster\"")
                .find("early_stopping.model: must be \"last\", \"rungs\", \"highest_rung\" or \"forecast\", not \"mobster\""),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\ngrace = 1").find("early_stopping.grace"), std::string::npos);
  EXPECT_NE(table("max_step = 9\nkeep_checkpoints = \"best\"")
                .find("early_stopping.keep_checkpoints: is for mode = \"promotion\""),
            std::string::npos);
  EXPECT_NE(table("max_step = 9\nmode = \"promotion\"\nkeep_checkpoints = \"some\"")
                .find("early_stopping.keep_checkpoints: must be \"best\", \"all\" or \"none\", not \"some\""),
            std::string::npos);
  const std::string stepwise =
      error_of(with(valid_with("retries = 1", "retries = 1\nstepwise = 2"), "[space]", "[early_stopping]\nmax_step = 9\n[space]"));
  EXPECT_NE(stepwise.find("early_stopping: cannot be combined with [objective] stepwise"), std::string::npos) << stepwise;
  EXPECT_NE(stepwise.find("job.toml:"), std::string::npos) << stepwise;
}

TEST_F(JobSpecTest, a_tasks_budget_may_also_be_given_in_steps_of_the_early_stopping_table) {
  const JobSpec none = parse(valid_with("[space]", "[early_stopping]\nmax_step = 9\n\n[space]"));
  ASSERT_FALSE(none.tasks.empty());
  EXPECT_EQ(none.tasks[0].budget_steps, 0) << "no limit";
  const std::string with_steps = with(valid_with("[space]", "[early_stopping]\nmax_step = 9\n\n[space]"), "budget = ",
                                      "budget_steps = 120\nbudget = ");
  const JobSpec steps = parse(with_steps);
  EXPECT_EQ(steps.tasks[0].budget_steps, 120);
  const std::string without_table = error_of(with(kValid, "budget = ", "budget_steps = 120\nbudget = "));
  EXPECT_NE(without_table.find("tasks[0].budget_steps: counts [early_stopping] steps; add an [early_stopping] table or remove it"),
            std::string::npos) << without_table;
  const std::string zero = error_of(with(valid_with("[space]", "[early_stopping]\nmax_step = 9\n\n[space]"), "budget = ",
                                         "budget_steps = 0\nbudget = "));
  EXPECT_NE(zero.find("tasks[0].budget_steps: must be an integer between 1 and 10^12"), std::string::npos) << zero;
}

TEST_F(JobSpecTest, early_stopping_transfer_is_on_by_default_and_only_for_successive_halving) {
  const JobSpec on = parse(valid_with("[space]", "[early_stopping]\nmax_step = 9\n\n[space]"));
  ASSERT_TRUE(on.early_stopping);
  EXPECT_TRUE(on.early_stopping->transfer);
  const JobSpec off = parse(valid_with("[space]", "[early_stopping]\nmax_step = 9\ntransfer = false\n\n[space]"));
  EXPECT_FALSE(off.early_stopping->transfer);
  EXPECT_NE(error_of(valid_with("[space]", "[early_stopping]\nrule = \"median\"\nmax_step = 9\ntransfer = true\n\n[space]"))
                .find("early_stopping.transfer: is for rule = \"asha\" or \"hyperband\""),
            std::string::npos);
}

// rule = "predictive" stops on a forecast: its min_probability (0.05 by default) is a probability,
// and only it takes that key and model = "forecast".
TEST_F(JobSpecTest, early_stopping_predictive_takes_a_probability_and_the_forecast_model) {
  const JobSpec plain = parse(valid_with("[space]", "[early_stopping]\nrule = \"predictive\"\nmax_step = 27\n\n[space]"));
  ASSERT_TRUE(plain.early_stopping);
  EXPECT_EQ(plain.early_stopping->rule, StoppingRule::predictive);
  EXPECT_EQ(plain.early_stopping->min_probability, 0.05);
  EXPECT_EQ(plain.early_stopping->model, lbo::jobs::CurveModel::forecast) << "what it judged a stopped trial by";
  EXPECT_EQ(plain.early_stopping->brackets, 1);
  EXPECT_EQ(plain.early_stopping->rungs(0), (std::vector<std::int64_t>{1, 3, 9}));
  const JobSpec set = parse(valid_with(
      "[space]", "[early_stopping]\nrule = \"predictive\"\nmax_step = 27\nmin_probability = 0.01\nmodel = \"forecast\"\nmode = \"promotion\"\n\n[space]"));
  EXPECT_EQ(set.early_stopping->min_probability, 0.01);
  EXPECT_EQ(set.early_stopping->model, lbo::jobs::CurveModel::forecast);
  EXPECT_EQ(set.early_stopping->mode, StoppingMode::promotion);
  const auto table = [&](const std::string& body) { return error_of(valid_with("[space]", "[early_stopping]\n" + body + "\n[space]")); };
  for (const char* p : {"0", "1", "1.5", "-0.1"}) {
    EXPECT_NE(table(std::string("rule = \"predictive\"\nmax_step = 9\nmin_probability = ") + p)
                  .find("early_stopping.min_probability: must be a probability between 0 and 1 (exclusive), such as 0.05"),
              std::string::npos) << p;
  }
  EXPECT_NE(table("max_step = 9\nmin_probability = 0.1").find("early_stopping.min_probability: is for rule = \"predictive\", not \"hyperband\""),
            std::string::npos);
  EXPECT_NE(table("rule = \"asha\"\nmax_step = 9\nmodel = \"forecast\"").find("early_stopping.model: \"forecast\" is for rule = \"predictive\""),
            std::string::npos);
  EXPECT_NE(table("rule = \"predictive\"\nmax_step = 9\ntransfer = false").find("early_stopping.transfer: is for rule = \"asha\" or \"hyperband\""),
            std::string::npos);
}

TEST_F(JobSpecTest, failures_are_learned_unless_the_job_says_ignore) {
  EXPECT_EQ(parse(kValid).objective.failures, FailureLearning::learn);
  EXPECT_EQ(parse(valid_with("retries = 1", "retries = 1\nfailures = \"ignore\"")).objective.failures, FailureLearning::ignore);
  EXPECT_EQ(parse(valid_with("retries = 1", "retries = 1\nfailures = \"learn\"")).objective.failures, FailureLearning::learn);
  const std::string message = error_of(valid_with("retries = 1", "retries = 1\nfailures = \"avoid\""));
  EXPECT_NE(message.find("job.toml:9:12: objective.failures: \"avoid\" is neither \"learn\" nor \"ignore\""), std::string::npos)
      << message;
  EXPECT_NE(error_of(valid_with("retries = 1", "retries = 1\nfailures = true")).find("objective.failures"), std::string::npos);
}

// [[constraints]]: limits on the result's metrics, each with min and/or max; every mistake names
// its place and what to write.
TEST_F(JobSpecTest, constraints_limit_metrics_and_each_mistake_names_its_place) {
  EXPECT_TRUE(parse(kValid).constraints.empty());
  const std::string two = kValid + "\n[[constraints]]\nname = \"memory_gb\"\nmax = 16\n\n[[constraints]]\nname = \"latency_ms\"\n"
                                   "min = 0.5\nmax = 5\n";
  const auto constraints = parse(two).constraints;
  ASSERT_EQ(constraints.size(), 2u);
  EXPECT_EQ(constraints[0], (lbo::jobs::Constraint{"memory_gb", std::nullopt, 16.0}));
  EXPECT_EQ(constraints[1], (lbo::jobs::Constraint{"latency_ms", 0.5, 5.0}));
  EXPECT_EQ(constraints[1].describe(), "0.5 <= latency_ms <= 5");
  const auto error_with = [&](const std::string& table) { return error_of(kValid + "\n[[constraints]]\n" + table); };
  const int line = static_cast<int>(std::count(kValid.begin(), kValid.end(), '\n')) + 3;  // the table's first key
  const std::string at = "job.toml:" + std::to_string(line);
  std::string message = error_with("name = \"memory_gb\"\n");
  EXPECT_NE(message.find("constraints[0]: limits nothing; give it max"), std::string::npos) << message;
  message = error_with("name = \"t\"\nmin = 5\nmax = 1\n");
  EXPECT_NE(message.find(":" + std::to_string(line + 1) + ":7: constraints[0].min: must be < max (1)"), std::string::npos) << message;
  message = error_with("name = \"objective\"\nmax = 1\n");
  EXPECT_NE(message.find(at + ":8: constraints[0].name: \"objective\" is what lbo optimizes"), std::string::npos) << message;
  message = error_with("name = \"\"\nmax = 1\n");
  EXPECT_NE(message.find("constraints[0].name: is empty"), std::string::npos) << message;
  message = error_with("name = \"t\"\nmax = \"16 GB\"\n");
  EXPECT_NE(message.find("constraints[0].max: must be a number, not a string"), std::string::npos) << message;
  message = error_with("name = \"t\"\nmax = nan\n");
  EXPECT_NE(message.find("constraints[0].max: must be a finite number"), std::string::npos) << message;
  message = error_with("name = \"t\"\nmaximum = 1\n");
  EXPECT_NE(message.find("constraints[0].maximum"), std::string::npos) << message;
  message = error_with("name = \"t\"\nmax = 1\n[[constraints]]\nname = \"t\"\nmin = 0\n");
  EXPECT_NE(message.find("constraints[1].name: limits \"t\" again (first on line " + std::to_string(line - 1)), std::string::npos)
      << message;
  message = error_of("constraints = { name = \"t\", max = 1 }\n" + kValid);
  EXPECT_NE(message.find("constraints: must be an array of tables"), std::string::npos) << message;
}

TEST_F(JobSpecTest, several_objectives_are_named_with_directions_and_each_mistake_names_its_place) {
  const std::string direction = "direction = \"maximize\"\n";
  const auto with = [&](const std::string& objectives) {
    std::string text = kValid;
    text.replace(text.find(direction), direction.size(), objectives);
    return text;
  };
  const std::string two =
      "objectives = [{ name = \"auc\", direction = \"maximize\" }, { name = \"train_s\", direction = \"minimize\", reference = 3600 }]\n";
  const lbo::jobs::JobSpec job = parse(with(two));
  ASSERT_EQ(job.objective.several.size(), 2u);
  EXPECT_EQ(job.objective.objective(), Objective(Direction::maximize, "auc"));
  EXPECT_EQ(job.objective.objectives()[1], Objective(Direction::minimize, "train_s"));
  EXPECT_EQ(job.objective.direction, Direction::maximize);  // the primary's
  EXPECT_EQ(job.objective.result_names(), (std::vector<std::string>{"auc", "train_s"}));
  ASSERT_EQ(job.objective.reference.size(), 2u);
  EXPECT_TRUE(std::isnan(job.objective.reference[0]));
  EXPECT_EQ(job.objective.reference[1], 3600.0);
  EXPECT_TRUE(parse(kValid).objective.several.empty());
  EXPECT_TRUE(parse(kValid).objective.result_names().empty());

  std::string message = error_of(with(two + direction));
  EXPECT_NE(message.find("objective.direction: and objective.objectives both given"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"auc\", direction = \"maximize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives: names fewer than two objectives"), std::string::npos) << message;
  message = error_of(with("objectives = [\"auc\", \"train_s\"]\n"));
  EXPECT_NE(message.find("objective.objectives: must be an array of tables"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"auc\", direction = \"maximize\" }, { name = \"auc\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[1].name: names \"auc\" again (first on line 6)"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"auc\", direction = \"up\" }, { name = \"s\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[0].direction: \"up\" is neither"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"auc\" }, { name = \"s\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[0].direction: missing"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"metrics\", direction = \"maximize\" }, { name = \"s\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[0].name: \"metrics\" is a key of the result line"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"a\", direction = \"maximize\", reference = nan }, { name = \"s\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[0].reference: must be a finite number"), std::string::npos) << message;
  message = error_of(with("objectives = [{ name = \"a\", direction = \"maximize\", ref = 1 }, { name = \"s\", direction = \"minimize\" }]\n"));
  EXPECT_NE(message.find("objective.objectives[0].ref"), std::string::npos) << message;
  message = error_of(with(two + "stepwise = 3\n"));
  EXPECT_NE(message.find("objective.objectives: and objective.stepwise exclude each other"), std::string::npos) << message;
  message = error_of(with(two) + "\n[[constraints]]\nname = \"train_s\"\nmax = 10\n");
  EXPECT_NE(message.find("constraints[0].name: \"train_s\" is what lbo optimizes"), std::string::npos) << message;
  message = error_of(with(""));
  EXPECT_NE(message.find("objective.direction: missing; add direction = \"maximize\" or \"minimize\" (or objectives"), std::string::npos)
      << message;
}

// [early_stopping] objective: the objective the reports give, with several; the primary by default.
TEST_F(JobSpecTest, early_stopping_goes_by_the_objective_it_names) {
  const std::string direction = "direction = \"maximize\"\n";
  const std::string two = "objectives = [{ name = \"auc\", direction = \"maximize\" }, { name = \"train_s\", direction = \"minimize\" }]\n";
  const auto with = [&](const std::string& objectives, const std::string& stopping) {
    std::string text = kValid;
    text.replace(text.find(direction), direction.size(), objectives);
    return text + "\n[early_stopping]\nmax_step = 9\n" + stopping;
  };
  const lbo::jobs::JobSpec by_default = parse(with(two, ""));
  EXPECT_EQ(by_default.early_stopping->objective, 0u);
  EXPECT_EQ(by_default.stopping_objective(), Objective(Direction::maximize, "auc"));
  const lbo::jobs::JobSpec named = parse(with(two, "objective = \"train_s\"\n"));
  EXPECT_EQ(named.early_stopping->objective, 1u);
  EXPECT_EQ(named.stopping_objective(), Objective(Direction::minimize, "train_s"));
  EXPECT_EQ(parse(with(direction, "")).stopping_objective(), Objective(Direction::maximize));

  std::string message = error_of(with(two, "objective = \"loss\"\n"));
  EXPECT_NE(message.find("early_stopping.objective: \"loss\" is none of [objective] objectives (\"auc\", \"train_s\")"), std::string::npos)
      << message;
  message = error_of(with(direction, "objective = \"objective\"\n"));
  EXPECT_NE(message.find("early_stopping.objective: is for a job of several objectives"), std::string::npos) << message;
}
