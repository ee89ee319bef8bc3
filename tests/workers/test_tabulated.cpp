// A work order looked up in a table: the nearest row's value with the row in its metrics, and a
// failed row, a task the table lacks or parameters that are none of the space's as failures.

#include "lbo/workers/tabulated.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace lbo::workers;
namespace fs = std::filesystem;

TEST(TabulatedTest, an_order_gets_its_tasks_nearest_rows_value_or_fails_with_the_reason) {
  const fs::path file = fs::temp_directory_path() / ("lbo-tabulated-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file) << "task,x,loss,secs\na,0.1,5,10\na,0.9,,20\nb,0.5,7,30\n";
  const lbo::jobs::Space space({lbo::jobs::ParamSpec{"x", lbo::jobs::ParamType::real, 0, 1, false, {}, {}}});
  lbo::jobs::ObjectiveTableSpec spec;
  spec.path = file;
  spec.objective_column = "loss";
  spec.time_column = "secs";
  const lbo::jobs::ObjectiveTable table = lbo::jobs::ObjectiveTable::load(spec, space);
  fs::remove(file);
  const auto order = [](const std::string& task, const std::string& params) {
    WorkOrder o;
    o.env = {{"LBO_TASK", task}};
    o.params_json = params;
    return o;
  };

  const Outcome ok = evaluate_tabulated(table, space, order("a", "{\"x\":0.25}"));
  EXPECT_EQ(ok.status, TrialStatus::ok);
  EXPECT_EQ(ok.objective, 5.0);
  EXPECT_EQ(ok.metrics_json, "{\"table_line\":2,\"table_distance\":0.15,\"table_time_s\":10}");
  const Outcome failed_row = evaluate_tabulated(table, space, order("a", "{\"x\":0.8}"));
  EXPECT_EQ(failed_row.status, TrialStatus::failed);
  EXPECT_NE(failed_row.reason.find("the nearest tabulated evaluation (lbo-tabulated-"), std::string::npos) << failed_row.reason;
  EXPECT_NE(failed_row.reason.find(".csv:3) failed"), std::string::npos) << failed_row.reason;
  const Outcome no_task = evaluate_tabulated(table, space, order("c", "{\"x\":0.5}"));
  EXPECT_EQ(no_task.status, TrialStatus::failed);
  EXPECT_NE(no_task.reason.find("is of task \"c\""), std::string::npos) << no_task.reason;
  const Outcome bad = evaluate_tabulated(table, space, order("a", "{\"x\":\"wide\"}"));
  EXPECT_EQ(bad.status, TrialStatus::failed);
  EXPECT_EQ(bad.reason, "the table cannot look up this configuration: params: x: not a number");
}
