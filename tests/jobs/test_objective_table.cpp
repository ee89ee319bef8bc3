// CSV reading, table cells as parameter values, and the tabulated objective's file checks and
// nearest-row lookup, each against values worked out by hand.

#include "lbo/jobs/objective_table.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "lbo/jobs/csv.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"

using namespace lbo::jobs;
namespace fs = std::filesystem;

namespace {

// lr in [0.001, 0.1] on a log scale, depth in 1..9, opt in {adam, sgd}.
Space test_space() {
  ParamSpec lr{"lr", ParamType::real, 0.001, 0.1, true, {}, {}};
  ParamSpec depth{"depth", ParamType::integer, 1, 9, false, {}, {}};
  ParamSpec opt{"opt", ParamType::categorical, 0, 1, false, {"adam", "sgd"}, {}};
  return Space({lr, depth, opt});
}

Config config(double lr, double depth, double opt) { return Config{{lr, depth, opt}}; }

class ObjectiveTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lbo-table-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ObjectiveTableSpec write(const std::string& text, std::string time_column = "") {
    std::ofstream(dir_ / "evals.csv") << text;
    ObjectiveTableSpec spec;
    spec.path = dir_ / "evals.csv";
    spec.objective_column = "loss";
    spec.time_column = std::move(time_column);
    return spec;
  }
  std::string load_error(const std::string& text, std::string time_column = "") {
    try {
      ObjectiveTable::load(write(text, std::move(time_column)), test_space());
    } catch (const lbo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }

  fs::path dir_;
};

TEST(Csv, keeps_quoted_commas_quotes_and_line_breaks_and_the_line_each_record_starts_on) {
  const CsvTable t = parse_csv("a,b\r\n1,\"x, \"\"y\"\"\"\n\n\"two\nlines\",3\nlast,4");
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.records.size(), 3u);  // the blank line 3 is no record
  EXPECT_EQ(t.records[0].line, 2u);
  EXPECT_EQ(t.records[0].fields, (std::vector<std::string>{"1", "x, \"y\""}));
  EXPECT_EQ(t.records[1].line, 4u);
  EXPECT_EQ(t.records[1].fields, (std::vector<std::string>{"two\nlines", "3"}));
  EXPECT_EQ(t.records[2].line, 6u);  // after the quoted line break, and without a final newline
  EXPECT_EQ(t.column("b"), 1);
  EXPECT_EQ(t.column("c"), -1);
  EXPECT_EQ(t.field(t.records[2], 1), "4");
  EXPECT_EQ(t.field(t.records[2], 5), "");
  EXPECT_TRUE(parse_csv("").header.empty());
}

// A spreadsheet's UTF-8 byte order mark: the first column is still "task" (a table with one was
// refused for lacking its task column, while a warm-start file with one was read).
TEST(Csv, a_byte_order_mark_is_no_part_of_the_first_column) {
  const CsvTable t = parse_csv("\xEF\xBB\xBFtask,x\na,1\n");
  ASSERT_EQ(t.header.size(), 2u);
  EXPECT_EQ(t.header[0], "task");
  EXPECT_EQ(t.column("task"), 0);
  ASSERT_EQ(t.records.size(), 1u);
  EXPECT_EQ(t.records[0].line, 2u);
  EXPECT_EQ(parse_csv("a\xEF\xBB\xBF,b\n").header[0], "a\xEF\xBB\xBF") << "only at the start";
}

// A quote never closed swallows every later line into one field: the file is refused, naming
// the line of the quote (its rows once went missing without a word).
TEST_F(ObjectiveTableTest, a_quote_never_closed_is_an_input_error_naming_its_line) {
  EXPECT_EQ(parse_csv("a,b\n1,\"x\n2,3\n").unclosed_quote_line, 2u);
  EXPECT_EQ(parse_csv("a,b\n1,\"x\"\"y\"\n").unclosed_quote_line, 0u);
  const std::string error = load_error("task,x,loss\na,0.1,1\na,\"0.2,2\na,0.3,3\n");
  EXPECT_NE(error.find("evals.csv:3: a quote opened here is never closed"), std::string::npos) << error;
}

TEST(Csv, a_missing_file_is_an_input_error_naming_it) {
  try {
    read_csv_file("/nonexistent/evals.csv");
    FAIL() << "no error";
  } catch (const lbo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/evals.csv: cannot read it"), std::string::npos) << e.what();
  }
}

TEST(SpaceCells, parse_numbers_within_bounds_integers_and_choices_and_say_why_not) {
  const Space space = test_space();
  std::string why;
  EXPECT_EQ(space.parse_value(0, "0.01", why), 0.01);
  EXPECT_EQ(space.parse_value(0, " 1e-3 ", why), 0.001);
  EXPECT_EQ(space.parse_value(0, "0.1000000000001", why), 0.1);  // past high by rounding: high
  EXPECT_FALSE(space.parse_value(0, "0.2", why));
  EXPECT_EQ(why, "0.2 is above high = 0.1");
  EXPECT_FALSE(space.parse_value(0, "0.0001", why));
  EXPECT_EQ(why, "0.0001 is below low = 0.001");
  EXPECT_FALSE(space.parse_value(0, "fast", why));
  EXPECT_EQ(why, "\"fast\" is not a number");
  EXPECT_FALSE(space.parse_value(0, "nan", why));
  EXPECT_EQ(space.parse_value(1, "4", why), 4.0);
  EXPECT_EQ(space.parse_value(1, "4.0", why), 4.0);
  EXPECT_FALSE(space.parse_value(1, "4.5", why));
  EXPECT_EQ(why, "4.5 is not an integer");
  EXPECT_EQ(space.parse_value(2, "sgd", why), 1.0);
  EXPECT_FALSE(space.parse_value(2, "rmsprop", why));
  EXPECT_EQ(why, "\"rmsprop\" is not one of its choices");
}

TEST(SpaceCells, a_configuration_reads_active_cells_only_and_names_the_parameter_of_a_bad_one) {
  ParamSpec opt{"opt", ParamType::categorical, 0, 1, false, {"adam", "sgd"}, {}};
  ParamSpec momentum{"momentum", ParamType::real, 0, 1, false, {}, {Condition{0, {1}}}};  // only with sgd
  const Space space({opt, momentum});
  std::vector<std::string> cells = {"adam", "not read"};
  std::string why;
  const auto adam = space.parse_config([&](int p) { return std::string_view(cells[static_cast<std::size_t>(p)]); }, why);
  ASSERT_TRUE(adam) << why;
  EXPECT_EQ(*adam, (Config{{0.0, std::nullopt}}));
  cells = {"sgd", ""};
  EXPECT_FALSE(space.parse_config([&](int p) { return std::string_view(cells[static_cast<std::size_t>(p)]); }, why));
  EXPECT_EQ(why, "momentum: empty, but the parameter is active there");
  cells = {"sgd", "2"};
  EXPECT_FALSE(space.parse_config([&](int p) { return std::string_view(cells[static_cast<std::size_t>(p)]); }, why));
  EXPECT_EQ(why, "momentum: 2 is above high = 1");
}

TEST(SpaceCells, from_json_reads_what_to_json_writes) {
  const Space space = test_space();
  const Config c = config(0.0123, 7, 1);
  EXPECT_EQ(space.from_json(space.to_json(c)), c);
  EXPECT_THROW(space.from_json("{\"opt\": \"rmsprop\"}"), std::invalid_argument);
  EXPECT_THROW(space.from_json("[1]"), std::invalid_argument);
}

// The encoded box: lr ↦ log10(lr/0.001)/2, depth ↦ (depth-1)/8, opt ↦ one-hot (adam, sgd).
TEST_F(ObjectiveTableTest, the_nearest_row_is_the_nearest_in_the_encoded_box) {
  const ObjectiveTable table = ObjectiveTable::load(write("task,lr,depth,opt,loss\n"
                                                          "a,0.001,1,adam,5\n"    // (0, 0, 1, 0)
                                                          "a,0.1,9,adam,6\n"      // (1, 1, 1, 0)
                                                          "a,0.01,5,sgd,7\n"      // (0.5, 0.5, 0, 1)
                                                          "b,0.01,5,adam,8\n"),
                                                    test_space());
  EXPECT_EQ(table.tasks(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(table.row_count(), 4u);
  // lr = 0.01 (0.5), depth 5 (0.5), adam: √(0.5² + 0.5²) ≈ 0.707 from rows 1 and 2 alike, √2
  // from row 3 (the other choice): the first of the two equals, line 2.
  ObjectiveTable::Match m = table.nearest("a", config(0.01, 5, 0));
  ASSERT_NE(m.row, nullptr);
  EXPECT_EQ(m.row->line, 2u);
  EXPECT_NEAR(m.distance, std::sqrt(0.5), 1e-12);
  // Closer to row 2 in the numbers: lr 0.1·10^(-0.2) (0.9), depth 8 (0.875).
  m = table.nearest("a", config(0.1 * std::pow(10.0, -0.2), 8, 0));
  EXPECT_EQ(m.row->line, 3u);
  EXPECT_EQ(*m.row->objective, 6.0);
  EXPECT_NEAR(m.distance, std::hypot(0.1, 0.125), 1e-12);
  // sgd: row 4 differs by nothing, whatever the numbers of the adam rows.
  m = table.nearest("a", config(0.01, 5, 1));
  EXPECT_EQ(m.row->line, 4u);
  EXPECT_EQ(m.distance, 0.0);
  // Another task's rows never answer.
  m = table.nearest("b", config(0.001, 1, 0));
  EXPECT_EQ(m.row->line, 5u);
  EXPECT_EQ(table.nearest("c", config(0.01, 5, 0)).row, nullptr);
}

// The k-d tree answers as a scan of the rows in file order would: on a table of 3,000 rows with
// integer and categorical columns (so many rows are equally near), with repeated rows, and at
// queries anywhere, on the rows themselves, and between two rows.
TEST_F(ObjectiveTableTest, the_nearest_row_is_the_one_a_scan_in_file_order_finds) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> lr(-3, -1);
  std::uniform_int_distribution<int> depth(1, 9), opt(0, 1);
  std::string text = "task,lr,depth,opt,loss\n";
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) {
    // Every tenth row repeats an earlier one; lr on a grid of 5 values in half the rows.
    std::string line;
    if (i >= 10 && i % 10 == 0) {
      line = lines[std::uniform_int_distribution<std::size_t>(0, lines.size() - 1)(rng)];
    } else {
      const double x = i % 2 == 0 ? lr(rng) : -3 + 0.5 * std::uniform_int_distribution<int>(0, 4)(rng);
      line = "a," + std::to_string(std::pow(10.0, x)) + "," + std::to_string(depth(rng)) + "," + (opt(rng) ? "sgd" : "adam");
    }
    lines.push_back(line);
    text += line + "," + std::to_string(i) + "\n";
  }
  const ObjectiveTable table = ObjectiveTable::load(write(text), test_space());
  const std::vector<ObjectiveTable::Row>& rows = table.rows("a");
  ASSERT_EQ(rows.size(), 3000u);
  const auto scan = [&](const Config& c) {
    const std::vector<double> x = table.encode(c);
    const ObjectiveTable::Row* best = nullptr;
    double best_distance = std::numeric_limits<double>::infinity();
    for (const ObjectiveTable::Row& row : rows) {
      double squared = 0;
      for (std::size_t i = 0; i < x.size(); ++i) squared += (x[i] - row.encoded[i]) * (x[i] - row.encoded[i]);
      if (std::sqrt(squared) < best_distance) {
        best = &row;
        best_distance = std::sqrt(squared);
      }
    }
    return std::make_pair(best, best_distance);
  };
  int repeated_answers = 0;
  for (int q = 0; q < 600; ++q) {
    Config c;
    if (q % 3 == 0) {
      c = rows[std::uniform_int_distribution<std::size_t>(0, rows.size() - 1)(rng)].config;
    } else if (q % 3 == 1) {
      c = config(std::pow(10.0, -3 + 0.5 * std::uniform_int_distribution<int>(0, 4)(rng)), depth(rng), opt(rng));
    } else {
      c = config(std::pow(10.0, lr(rng)), depth(rng), opt(rng));
    }
    const auto [row, distance] = scan(c);
    const ObjectiveTable::Match m = table.nearest("a", c);
    ASSERT_EQ(m.row, row) << "query " << q << ": line " << (m.row ? m.row->line : 0) << " against " << row->line;
    EXPECT_EQ(m.distance, distance);
    for (const ObjectiveTable::Row& other : rows) {
      if (&other != row && other.config.values == row->config.values) {
        ++repeated_answers;
        break;
      }
    }
  }
  EXPECT_GT(repeated_answers, 100);  // the tie-breaking was exercised
  // A row repeats an earlier one exactly when it is not its own configuration's nearest row
  // (what table_restrict leaves out), and the task's configurations are the rows left.
  std::size_t distinct = 0;
  for (const ObjectiveTable::Row& row : rows) {
    EXPECT_EQ(row.repeat, scan(row.config).first != &row) << "line " << row.line;
    distinct += row.repeat ? 0 : 1;
  }
  EXPECT_LT(distinct, 2800u);
  EXPECT_EQ(table.distinct_rows("a"), distinct);
  EXPECT_EQ(table.distinct_rows("b"), 0u);
}

// Issue 56: a table with fewer configurations than a restricted budget passed validation, then
// proposed points not in it; add-task took a task the table lacks.
TEST_F(ObjectiveTableTest, a_task_must_be_in_the_table_and_a_restricted_budget_within_its_configurations) {
  ObjectiveTableSpec spec = write("task,lr,depth,opt,loss\n"
                                  "a,0.01,3,adam,1\n"
                                  "a,0.01,3,adam,2\n"  // another seed of the first
                                  "a,0.02,3,adam,3\n"
                                  "b,0.01,3,sgd,4\n");
  const ObjectiveTable open = ObjectiveTable::load(spec, test_space());
  EXPECT_EQ(open.distinct_rows("a"), 2u);
  EXPECT_EQ(open.task_problem("a", 50), "");  // unrestricted: a budget may exceed the rows
  EXPECT_EQ(open.task_problem("c", 1), "no row of evals.csv is of task \"c\" (column \"task\"); its tasks are \"a\", \"b\"");
  spec.restricted = true;
  const ObjectiveTable restricted = ObjectiveTable::load(spec, test_space());
  EXPECT_EQ(restricted.task_problem("a", 2), "");
  EXPECT_EQ(restricted.task_problem("a", 3),
            "3 trials are more than the 2 configuration(s) of task \"a\" in evals.csv (3 rows, 1 of them repeating an "
            "earlier row's configuration), and objective.table_restrict proposes each at most once; lower the budget");
  EXPECT_EQ(restricted.task_problem("b", 2),
            "2 trials are more than the 1 configuration(s) of task \"b\" in evals.csv, and objective.table_restrict "
            "proposes each at most once; lower the budget");
}

TEST_F(ObjectiveTableTest, an_unusable_objective_cell_is_a_failed_evaluation_and_a_time_is_kept) {
  const ObjectiveTable table =
      ObjectiveTable::load(write("task,lr,depth,opt,loss,seconds\n"
                                 "a,0.001,1,adam,,10\n"
                                 "a,0.01,1,adam,nan,20\n"
                                 "a,0.1,1,adam,diverged,30\n"
                                 "a,0.1,9,adam,1.5,40.5\n",
                                 "seconds"),
                           test_space());
  EXPECT_EQ(table.failed_count(), 3u);
  const std::vector<ObjectiveTable::Row>& rows = table.rows("a");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(rows[0].objective);
  EXPECT_FALSE(rows[1].objective);
  EXPECT_FALSE(rows[2].objective);
  EXPECT_EQ(rows[3].objective, 1.5);
  EXPECT_EQ(rows[3].time_s, 40.5);
}

TEST_F(ObjectiveTableTest, bad_rows_are_named_by_line_with_the_fix) {
  EXPECT_EQ(load_error("task,lr,depth,loss\na,0.01,1,3\n"),
            "evals.csv:1: no column \"opt\" in its header; name the columns in [objective] (table_task, table_objective, "
            "table_time) and give the space's parameters the table's column names");
  const std::string e = load_error("task,lr,depth,opt,loss\n"
                                   "a,0.5,1,adam,3\n"
                                   "a,0.01,1,rmsprop,3\n"
                                   ",0.01,1,adam,3\n"
                                   "a,0.01,1,adam,3\n");
  EXPECT_NE(e.find("3 problem(s) in the table:"), std::string::npos) << e;
  EXPECT_NE(e.find("evals.csv:2: lr: 0.5 is above high = 0.1; fix the row or widen the space, or leave the row out"),
            std::string::npos) << e;
  EXPECT_NE(e.find("evals.csv:3: opt: \"rmsprop\" is not one of its choices"), std::string::npos) << e;
  EXPECT_NE(e.find("evals.csv:4: no task in column \"task\""), std::string::npos) << e;
  EXPECT_NE(load_error("task,lr,depth,opt,loss,t\na,0.01,1,adam,3,-1\n", "t").find("evals.csv:2: t: \"-1\" is no duration"),
            std::string::npos);
  EXPECT_EQ(load_error("task,lr,depth,opt,loss\n"), "evals.csv: no rows below its header; the table needs evaluations");
  std::string many = "task,lr,depth,opt,loss\n";
  for (int i = 0; i < 7; ++i) many += "a,1,1,adam,3\n";
  EXPECT_NE(load_error(many).find("... and 2 more"), std::string::npos);
}

class TableJobTest : public ObjectiveTableTest {
 protected:
  std::string job(const std::string& objective) {
    return "name = \"t\"\n[objective]\n" + objective +
           "direction = \"minimize\"\n"
           "[space]\nlr = { type = \"float\", low = 0.001, high = 0.1, log = true }\n"
           "depth = { type = \"int\", low = 1, high = 9 }\n"
           "opt = { type = \"categorical\", choices = [\"adam\", \"sgd\"] }\n"
           "[[tasks]]\nname = \"a\"\nbudget = 3\n";
  }
  std::string job_error(const std::string& text) {
    try {
      parse_job(text, dir_ / "job.toml");
    } catch (const lbo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }
};

TEST_F(TableJobTest, a_table_job_reads_its_file_with_the_job) {
  write("task,lr,depth,opt,loss,secs\na,0.01,1,adam,3,2\n");
  const JobSpec spec = parse_job(job("table = \"evals.csv\"\ntable_objective = \"loss\"\ntable_time = \"secs\"\n"),
                                 dir_ / "job.toml");
  ASSERT_TRUE(spec.objective.table);
  EXPECT_TRUE(spec.objective.command.empty());
  EXPECT_EQ(spec.objective.table->path, dir_ / "evals.csv");
  EXPECT_EQ(spec.objective.table->task_column, "task");
  EXPECT_EQ(spec.objective.table->time_column, "secs");
  ASSERT_TRUE(spec.objective.table_data);
  EXPECT_EQ(spec.objective.table_data->rows("a").size(), 1u);
}

TEST_F(TableJobTest, table_keys_are_checked_where_they_are_written) {
  write("task,lr,depth,opt,loss\nb,0.01,1,adam,3\n");
  EXPECT_NE(job_error(job("table = \"evals.csv\"\ntable_objective = \"loss\"\n"))
                .find("job.toml:3:9: objective.table: no row of evals.csv is of task \"a\" (column \"task\"); its tasks are \"b\""),
            std::string::npos);
  EXPECT_NE(job_error(job("table = \"evals.csv\"\n")).find("objective.table_objective: missing; name the table's column"),
            std::string::npos);
  EXPECT_NE(job_error(job("command = [\"/bin/true\"]\ntable = \"evals.csv\"\ntable_objective = \"loss\"\n"))
                .find("objective.command: an objective is a command or a table, not both"),
            std::string::npos);
  EXPECT_NE(job_error(job("command = [\"/bin/true\"]\ntable_objective = \"loss\"\n"))
                .find("objective.table_objective: needs objective.table"),
            std::string::npos);
  EXPECT_NE(job_error(job("")).find("objective.command: missing; add command = [\"program\", \"arg\", ...] (an argv array, "
                                    "no shell), or table = \"evals.csv\""),
            std::string::npos);
  write("task,lr,depth,opt,loss\na,0.01,1,adam,3\n");
  EXPECT_NE(job_error(job("table = \"evals.csv\"\ntable_objective = \"loss\"\nstepwise = 2\n"))
                .find("objective.table: a table has no steps; leave out objective.stepwise"),
            std::string::npos);
  EXPECT_NE(job_error(job("table = \"evals.csv\"\ntable_objective = \"loss\"\n") + "[early_stopping]\nmax_step = 9\n")
                .find("objective.table: a table gives no intermediate reports; leave out [early_stopping]"),
            std::string::npos);
  EXPECT_NE(job_error(job("table = \"evals.csv\"\ntable_objective = \"loss\"\ntable_restrict = \"yes\"\n"))
                .find("objective.table_restrict: must be true or false"),
            std::string::npos);
  EXPECT_NE(job_error(job("command = [\"/bin/true\"]\ntable_restrict = true\n")).find("objective.table_restrict: needs objective.table"),
            std::string::npos);
  write("task,lr,depth,opt,loss\na,0.5,1,adam,3\n");
  EXPECT_NE(job_error(job("table = \"evals.csv\"\ntable_objective = \"loss\"\n"))
                .find("objective.table: 1 problem(s) in the table:\n  evals.csv:2: lr: 0.5 is above high = 0.1"),
            std::string::npos);
}

TEST_F(TableJobTest, a_simulated_job_names_its_slots_and_durations) {
  write("task,lr,depth,opt,loss,secs\na,0.01,1,adam,3,2\n");
  const std::string table = "table = \"evals.csv\"\ntable_objective = \"loss\"\n";
  JobSpec spec = parse_job(job(table + "table_time = \"secs\"\n") + "[workers]\nsimulate = 2048\n", dir_ / "job.toml");
  EXPECT_EQ(spec.workers.simulate, 2048);
  EXPECT_EQ(spec.workers.simulate_duration.kind, SimulatedDuration::Kind::table);
  spec = parse_job(job(table) + "[workers]\nsimulate = 8\nsimulate_duration = \"lognormal(6.2, 0.5)\"\n", dir_ / "job.toml");
  EXPECT_EQ(spec.workers.simulate_duration, (SimulatedDuration{SimulatedDuration::Kind::lognormal, 6.2, 0.5}));
  spec = parse_job(job(table) + "[workers]\nsimulate = 8\nsimulate_duration = 600\n", dir_ / "job.toml");
  EXPECT_EQ(spec.workers.simulate_duration, (SimulatedDuration{SimulatedDuration::Kind::fixed, 600, 0}));
  EXPECT_EQ(simulation_problem(spec, "--simulate"), "");

  EXPECT_NE(job_error(job(table) + "[workers]\nsimulate = 8\n")
                .find("job.toml:14:12: workers.simulate: a simulated trial takes the time of its table row, and the table "
                      "has no time column; name it with objective.table_time, or set workers.simulate_duration"),
            std::string::npos)
      << job_error(job(table) + "[workers]\nsimulate = 8\n");
  EXPECT_NE(job_error(job("command = [\"/bin/true\"]\n") + "[workers]\nsimulate = 8\n")
                .find("workers.simulate: a simulated run looks its trials up in a table, and this job runs a command; "
                      "set [objective] table, or run without simulation"),
            std::string::npos);
  EXPECT_NE(job_error(job(table) + "[workers]\nsimulate = 0\n").find("workers.simulate: must be in 1..1000000"),
            std::string::npos);
  for (const char* bad : {"\"uniform(9, 3)\"", "-1", "\"lognormal(1, 0)\"", "\"exponential(0)\"", "\"gamma(2, 3)\"",
                          "\"uniform(1)\"", "true"}) {
    EXPECT_NE(job_error(job(table) + "[workers]\nsimulate = 8\nsimulate_duration = " + bad + "\n")
                  .find("job.toml:15:21: workers.simulate_duration: must be \"table\", seconds >= 0"),
              std::string::npos)
        << bad;
  }
}

TEST(SimulatedDurationTest, what_to_string_writes_parses_back) {
  using Kind = SimulatedDuration::Kind;
  for (const SimulatedDuration& d : {SimulatedDuration{}, SimulatedDuration{Kind::fixed, 600, 0},
                                     SimulatedDuration{Kind::uniform, 300, 900.5}, SimulatedDuration{Kind::lognormal, -1.5, 0.25},
                                     SimulatedDuration{Kind::exponential, 42, 0}}) {
    const std::optional<SimulatedDuration> back = parse_simulated_duration(to_string(d));
    ASSERT_TRUE(back) << to_string(d);
    EXPECT_EQ(*back, d) << to_string(d);
  }
  EXPECT_EQ(to_string(SimulatedDuration{Kind::uniform, 300, 900.5}), "uniform(300, 900.5)");
  EXPECT_TRUE(parse_simulated_duration(" uniform( 1 ,2 ) "));
  EXPECT_FALSE(parse_simulated_duration("uniform(1, 2"));
  EXPECT_FALSE(parse_simulated_duration("uniform(a, 2)"));
  EXPECT_FALSE(parse_simulated_duration(""));
}

}  // namespace
