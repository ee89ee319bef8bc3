#include "lbo/report/comparison.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assets.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/version.hpp"

namespace lbo::report {

namespace {

using nlohmann::json;
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

struct Stats {
  double mean = kNone, se = kNone;
  int n = 0;
};

Stats stats_of(const std::vector<double>& xs) {
  Stats s;
  s.n = static_cast<int>(xs.size());
  if (xs.empty()) return s;
  double sum = 0;
  for (double x : xs) sum += x;
  s.mean = sum / s.n;
  if (s.n < 2) return s;
  double ss = 0;
  for (double x : xs) ss += (x - s.mean) * (x - s.mean);
  s.se = std::sqrt(ss / (s.n - 1) / s.n);
  return s;
}

json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// Each task's best so far after 1, 2, ... trials (NaN until its first ok result), by task name.
std::map<std::string, std::vector<double>> best_so_far(const orchestrator::RunState& state, bool maximize) {
  std::map<std::string, std::vector<double>> out;
  const auto& tasks = state.job().tasks;
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    std::vector<double>& curve = out[tasks[static_cast<std::size_t>(task)].name];
    double best = kNone;
    for (const std::int64_t id : state.task_trials(task)) {
      const orchestrator::Trial& t = state.trial(id);
      if (!t.finished) continue;
      if (t.outcome.status == workers::TrialStatus::ok) {
        const double y = t.outcome.objective;
        if (std::isnan(best) || (maximize ? y > best : y < best)) best = y;
      }
      curve.push_back(best);
    }
  }
  return out;
}

}  // namespace

json comparison_data(const std::vector<ComparedRun>& runs) {
  if (runs.empty()) throw std::invalid_argument("comparison_data: no runs");
  std::vector<std::string> methods;
  std::vector<std::string> task_names;
  std::map<std::string, std::map<int, std::map<std::string, std::vector<double>>>> curves;  // method → seed → task
  bool maximize = true;
  int seeds = 0;
  for (const ComparedRun& run : runs) {
    const orchestrator::RecoveredRun recovered = orchestrator::recover_run(run.dir);
    const orchestrator::JobIdentity& identity = recovered.state.job();
    maximize = identity.direction == jobs::Direction::maximize;
    if (std::find(methods.begin(), methods.end(), run.method) == methods.end()) methods.push_back(run.method);
    for (const auto& task : identity.tasks) {
      if (std::find(task_names.begin(), task_names.end(), task.name) == task_names.end()) task_names.push_back(task.name);
    }
    curves[run.method][run.seed] = best_so_far(recovered.state, maximize);
    seeds = std::max(seeds, run.seed);
  }
  json data;
  data["direction"] = maximize ? "maximize" : "minimize";
  data["methods"] = methods;
  data["seeds"] = seeds;
  data["generator"] = std::string(orchestrator::lbo_version());
  data["tasks"] = json::array();
  const double sign = maximize ? 1.0 : -1.0;
  for (const std::string& name : task_names) {
    std::size_t trials = 0;
    for (const auto& [method, by_seed] : curves) {
      for (const auto& [seed, tasks] : by_seed) {
        if (const auto it = tasks.find(name); it != tasks.end()) trials = std::max(trials, it->second.size());
      }
    }
    json task{{"name", name}, {"trials", trials}, {"series", json::object()}, {"paired", json::object()}};
    const auto at = [&](const std::string& method, int seed, std::size_t k) {
      const auto& tasks = curves[method][seed];
      const auto it = tasks.find(name);
      return it == tasks.end() || k >= it->second.size() ? kNone : it->second[k];
    };
    for (const std::string& method : methods) {
      json series{{"mean", json::array()}, {"se", json::array()}, {"runs", json::array()}};
      json paired{{"mean", json::array()}, {"se", json::array()}, {"better", json::array()}, {"worse", json::array()}};
      for (std::size_t k = 0; k < trials; ++k) {
        std::vector<double> bests, advantages;
        int better = 0, worse = 0;
        for (const auto& [seed, tasks] : curves[method]) {
          const double mine = at(method, seed, k);
          if (std::isnan(mine)) continue;
          bests.push_back(mine);
          const double first = at(methods.front(), seed, k);
          if (method == methods.front() || std::isnan(first)) continue;
          advantages.push_back(sign * (first - mine));
          better += advantages.back() > 0 ? 1 : 0;
          worse += advantages.back() < 0 ? 1 : 0;
        }
        const Stats b = stats_of(bests), a = stats_of(advantages);
        series["mean"].push_back(number(b.mean));
        series["se"].push_back(number(b.se));
        series["runs"].push_back(b.n);
        paired["mean"].push_back(number(a.mean));
        paired["se"].push_back(number(a.se));
        paired["better"].push_back(better);
        paired["worse"].push_back(worse);
      }
      task["series"][method] = std::move(series);
      if (method != methods.front()) task["paired"][method] = std::move(paired);
    }
    data["tasks"].push_back(std::move(task));
  }
  return data;
}

namespace {

std::string cell(const json& x) {
  if (x.is_null()) return "";
  if (x.is_number_integer()) return std::to_string(x.get<long long>());
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", x.get<double>());
  return text;
}

}  // namespace

void write_comparison_csv(const json& data, const std::filesystem::path& file) {
  std::ostringstream out;
  out << "task,trials,method,runs,mean_best,stderr,paired_advantage,paired_stderr,first_better,first_worse\n";
  const std::string first = data["methods"].front().get<std::string>();
  for (const json& task : data["tasks"]) {
    const std::size_t trials = task["trials"].get<std::size_t>();
    for (std::size_t k = 0; k < trials; ++k) {
      for (const json& m : data["methods"]) {
        const std::string method = m.get<std::string>();
        const json& s = task["series"][method];
        // Task names are letters, digits, '.', '_' and '-'; method names are surrogates': no quoting.
        out << task["name"].get<std::string>() << ',' << k + 1 << ',' << method << ',' << cell(s["runs"][k]) << ','
            << cell(s["mean"][k]) << ',' << cell(s["se"][k]);
        if (method == first) {
          out << ",,,,\n";
          continue;
        }
        const json& p = task["paired"][method];
        out << ',' << cell(p["mean"][k]) << ',' << cell(p["se"][k]) << ',' << cell(p["better"][k]) << ','
            << cell(p["worse"][k]) << '\n';
      }
    }
  }
  orchestrator::write_file_atomically(file, out.str(), orchestrator::Durability::cached);
}

std::string comparison_summary(const json& data) {
  std::ostringstream out;
  const std::string first = data["methods"].front().get<std::string>();
  char line[256];
  for (const json& task : data["tasks"]) {
    const auto trials = task["trials"].get<std::size_t>();
    out << "task " << task["name"].get<std::string>() << " (" << data["direction"].get<std::string>()
        << "; mean best ± standard error over seeds; in brackets " << first << "'s paired advantage, > 0: " << first
        << " better)\n";
    std::vector<std::size_t> ks;
    for (std::size_t k : {1, 5, 10, 25, 50, 100}) {
      if (k < trials) ks.push_back(k);
    }
    if (trials > 0) ks.push_back(trials);
    std::snprintf(line, sizeof line, "  %-10s", "trials");
    out << line;
    for (std::size_t k : ks) {
      std::snprintf(line, sizeof line, "  %26zu", k);
      out << line;
    }
    out << "\n";
    for (const json& m : data["methods"]) {
      const std::string method = m.get<std::string>();
      std::snprintf(line, sizeof line, "  %-10s", method.c_str());
      out << line;
      for (std::size_t k : ks) {
        const json& s = task["series"][method];
        const json& mean = s["mean"][k - 1];
        const json& se = s["se"][k - 1];
        std::string text = "-";
        if (!mean.is_null()) {
          std::snprintf(line, sizeof line, "%.4g", mean.get<double>());
          text = line;
          if (!se.is_null()) {
            std::snprintf(line, sizeof line, " ± %.2g", se.get<double>());
            text += line;
          }
        }
        if (method != first && !mean.is_null()) {
          const json& adv = task["paired"][method]["mean"][k - 1];
          if (!adv.is_null()) {
            std::snprintf(line, sizeof line, " (%+.3g)", adv.get<double>());
            text += line;
          }
        }
        std::snprintf(line, sizeof line, "  %26s", text.c_str());
        out << line;
      }
      out << "\n";
    }
  }
  return out.str();
}

void write_comparison_html(const json& data, const std::filesystem::path& file) {
  json doc = data;
  doc["chart_library"] = "Apache ECharts " + std::string(assets::echarts_version());
  std::string page(assets::compare_template());
  const auto fill = [&page](std::string_view placeholder, const std::string& text) {
    const std::size_t at = page.find(placeholder);
    if (at == std::string::npos) throw std::logic_error("compare template: no " + std::string(placeholder));
    page.replace(at, placeholder.size(), text);
  };
  // The data last: its text must not be searched for the other placeholders.
  fill("/*@ECHARTS@*/", assets::script_safe(assets::echarts()));
  fill("/*@COMPARE_JS@*/", assets::script_safe(assets::compare_script()));
  fill("/*@DATA@*/", assets::json_safe(doc.dump(-1, ' ', false, json::error_handler_t::replace)));
  orchestrator::write_file_atomically(file, page, orchestrator::Durability::cached);
}

}  // namespace lbo::report
