#include "lbo/report/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assets.hpp"
#include "curves.hpp"
#include "lbo/jobs/objective.hpp"
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

// Each run's figure after 1, 2, ... trials: method → seed → task name → curve.
using Curves = std::map<std::string, std::map<int, std::map<std::string, std::vector<double>>>>;

// What a run spent: its trials, the steps they reported (early stopping), their time.
struct Spent {
  double trials = 0, steps = 0, seconds = 0;
};

Spent spent_by(const orchestrator::RunState& state) {
  Spent s;
  for (const orchestrator::Trial& t : state.trials()) {
    if (t.lost() || !t.finished) continue;
    s.trials += 1;
    s.steps += static_cast<double>(t.steps_spent());
    s.seconds += t.outcome.duration_s;
  }
  return s;
}

std::string format_number(double x) { return jobs::Objective::significant(x, 3); }

// The pooled verdict of `method` against the first at a few numbers of trials: the mean over
// every task and seed both ran of the first's best less the other's (oriented: > 0, the first
// better), its standard error over those task runs, and a plain sentence. Differences of unlike
// tasks are pooled as they are: the sentence is about this job's objective as it is scaled.
json verdict_of(const json& tasks, const std::string& first, const std::string& method,
                const Curves& curves,
                const jobs::Objective& objective) {
  std::size_t shortest = std::numeric_limits<std::size_t>::max();
  for (const json& task : tasks) shortest = std::min(shortest, task["trials"].get<std::size_t>());
  std::vector<std::size_t> budgets;
  for (std::size_t k : {5, 10, 25, 50, 100}) {
    if (k < shortest) budgets.push_back(k);
  }
  if (shortest > 0 && shortest != std::numeric_limits<std::size_t>::max()) budgets.push_back(shortest);
  json out = json::array();
  for (std::size_t k : budgets) {
    std::vector<double> differences;
    for (const json& task : tasks) {
      const std::string name = task["name"].get<std::string>();
      for (const auto& [seed, by_task] : curves.at(method)) {
        const auto theirs = by_task.find(name);
        const auto& first_runs = curves.at(first);
        const auto mine_seed = first_runs.find(seed);
        if (theirs == by_task.end() || mine_seed == first_runs.end()) continue;
        const auto mine = mine_seed->second.find(name);
        if (mine == mine_seed->second.end() || k > mine->second.size() || k > theirs->second.size()) continue;
        const double a = mine->second[k - 1], b = theirs->second[k - 1];
        if (std::isnan(a) || std::isnan(b)) continue;
        differences.push_back(objective.oriented(a) - objective.oriented(b));
      }
    }
    const Stats s = stats_of(differences);
    std::string sentence = first + " against " + method + " at " + std::to_string(k) + " trials over " +
                           std::to_string(s.n) + " task run(s): ";
    if (s.n == 0) {
      sentence += "no task run has a result of both yet";
    } else if (s.n < 2 || !std::isfinite(s.se)) {
      sentence += (s.mean >= 0 ? "ahead by " : "behind by ") + format_number(std::fabs(s.mean)) +
                  " in the one task run: too few to tell";
    } else {
      const bool distinct = std::fabs(s.mean) > 2 * s.se;
      sentence += (s.mean >= 0 ? "ahead by " : "behind by ") + format_number(std::fabs(s.mean)) + " ± " +
                  format_number(s.se) + (distinct ? ": distinguishable (more than 2 standard errors)" : ": not distinguishable");
    }
    out.push_back({{"trials", k}, {"mean", number(s.mean)}, {"se", number(s.se)}, {"n", s.n}, {"sentence", sentence}});
  }
  return out;
}

// With several objectives, per task: the reference point every run's hypervolume is measured
// from, the job's where it gives one, else derived from the feasible results of all the runs
// (a tenth of their range past the worst), so that the runs' figures compare.
std::map<std::string, std::vector<double>> common_references(const std::vector<orchestrator::RecoveredRun>& recovered,
                                                             const std::vector<double>& given, json& said) {
  std::map<std::string, std::vector<std::vector<double>>> pooled;
  for (const orchestrator::RecoveredRun& r : recovered) {
    for (auto& [task, values] : feasible_values(r.state)) pooled[task].insert(pooled[task].end(), values.begin(), values.end());
  }
  const jobs::Objectives objectives = recovered.front().state.job().all_objectives();
  std::map<std::string, std::vector<double>> out;
  for (const auto& [task, values] : pooled) {
    std::vector<double> reference = objectives.derived_reference(values);
    if (reference.empty()) continue;  // no feasible result in any run: nothing dominates
    json from = json::array();
    for (std::size_t i = 0; i < reference.size(); ++i) {
      const bool job = i < given.size() && std::isfinite(given[i]);
      if (job) reference[i] = given[i];
      from.push_back(job ? "job" : "derived");
    }
    said[task] = {{"reference", reference}, {"reference_from", from}};
    out[task] = std::move(reference);
  }
  return out;
}

// One task's figures: every method's mean figure and standard error after each number of trials,
// and the first method's paired advantage over each other one (comparison.hpp).
json task_json(const std::string& name, const Curves& curves, const std::vector<std::string>& methods,
               const jobs::Objective& objective) {
  std::size_t trials = 0;
  for (const auto& [method, by_seed] : curves) {
    for (const auto& [seed, tasks] : by_seed) {
      if (const auto it = tasks.find(name); it != tasks.end()) trials = std::max(trials, it->second.size());
    }
  }
  json task{{"name", name}, {"trials", trials}, {"series", json::object()}, {"paired", json::object()}};
  const auto at = [&](const std::string& method, int seed, std::size_t k) {
    const auto& tasks = curves.at(method).at(seed);
    const auto it = tasks.find(name);
    return it == tasks.end() || k >= it->second.size() ? kNone : it->second[k];
  };
  for (const std::string& method : methods) {
    json series{{"mean", json::array()}, {"se", json::array()}, {"runs", json::array()}};
    json paired{{"mean", json::array()}, {"se", json::array()}, {"better", json::array()}, {"worse", json::array()}};
    for (std::size_t k = 0; k < trials; ++k) {
      std::vector<double> bests, advantages;
      int better = 0, worse = 0;
      for (const auto& [seed, tasks] : curves.at(method)) {
        const double mine = at(method, seed, k);
        if (std::isnan(mine)) continue;
        bests.push_back(mine);
        const auto first_seed = curves.at(methods.front()).find(seed);
        const double first = first_seed == curves.at(methods.front()).end() ? kNone : at(methods.front(), seed, k);
        if (method == methods.front() || std::isnan(first)) continue;
        advantages.push_back(objective.oriented(first) - objective.oriented(mine));
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
  return task;
}

}  // namespace

json comparison_data(const std::vector<ComparedRun>& runs, const std::vector<double>& reference) {
  if (runs.empty()) throw std::invalid_argument("comparison_data: no runs");
  std::vector<orchestrator::RecoveredRun> recovered;
  for (const ComparedRun& run : runs) {
    recovered.push_back(orchestrator::recover_run(run.dir));
    if (recovered.back().state.job().objectives != recovered.front().state.job().objectives) {
      throw std::invalid_argument("lbo compare: " + run.dir.string() + " names other objectives than " + runs.front().dir.string());
    }
  }
  const orchestrator::JobIdentity& first_job = recovered.front().state.job();
  const bool several = !first_job.objectives.empty();
  // Several objectives: each run's hypervolume so far, larger is better; else its best so far.
  json references = json::object();
  const std::map<std::string, std::vector<double>> common =
      several ? common_references(recovered, reference, references) : std::map<std::string, std::vector<double>>{};
  const jobs::Objective objective = several ? jobs::Objective(jobs::Direction::maximize) : jobs::Objective(first_job.direction);
  std::vector<std::string> methods;
  std::vector<std::string> task_names;
  Curves curves;
  std::map<std::string, std::vector<Spent>> spent;  // method → per run
  int seeds = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ComparedRun& run = runs[i];
    const orchestrator::RunState& state = recovered[i].state;
    if (std::find(methods.begin(), methods.end(), run.method) == methods.end()) methods.push_back(run.method);
    for (const auto& task : state.job().tasks) {
      if (std::find(task_names.begin(), task_names.end(), task.name) == task_names.end()) task_names.push_back(task.name);
    }
    curves[run.method][run.seed] = several ? hypervolume_so_far(state, common) : best_so_far(state, objective);
    spent[run.method].push_back(spent_by(state));
    seeds = std::max(seeds, run.seed);
  }
  json data;
  data["direction"] = std::string(jobs::to_string(objective.direction()));
  data["measure"] = several ? "hypervolume" : "best";
  if (several) {
    data["objectives"] = json::array();
    for (const jobs::Objective& o : first_job.objectives) {
      data["objectives"].push_back({{"name", o.name()}, {"direction", std::string(jobs::to_string(o.direction()))}});
    }
  }
  data["methods"] = methods;
  data["seeds"] = seeds;
  data["generator"] = std::string(orchestrator::lbo_version());
  data["tasks"] = json::array();
  for (const std::string& name : task_names) {
    json task = task_json(name, curves, methods, objective);
    if (references.contains(name)) task.update(references[name]);
    data["tasks"].push_back(std::move(task));
  }
  // Each method's mean per run of what it spent, and the first's verdict against each other.
  data["spent"] = json::object();
  for (const std::string& method : methods) {
    Spent mean;
    for (const Spent& s : spent[method]) mean.trials += s.trials, mean.steps += s.steps, mean.seconds += s.seconds;
    const double n = static_cast<double>(std::max<std::size_t>(spent[method].size(), 1));
    data["spent"][method] = {{"trials", mean.trials / n}, {"steps", mean.steps / n}, {"seconds", mean.seconds / n}};
  }
  data["verdict"] = json::object();
  for (const std::string& method : methods) {
    if (method != methods.front()) data["verdict"][method] = verdict_of(data["tasks"], methods.front(), method, curves, objective);
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
  out << "task,trials,method,runs,mean_best,stderr,paired_advantage,paired_stderr,first_better,first_worse,measure\n";
  const std::string first = data["methods"].front().get<std::string>();
  const std::string measure = data.value("measure", "best");
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
          out << ",,,," << ',' << measure << '\n';
          continue;
        }
        const json& p = task["paired"][method];
        out << ',' << cell(p["mean"][k]) << ',' << cell(p["se"][k]) << ',' << cell(p["better"][k]) << ','
            << cell(p["worse"][k]) << ',' << measure << '\n';
      }
    }
  }
  orchestrator::write_file_atomically(file, out.str(), orchestrator::Durability::cached);
}

namespace {

// "minimize; mean best ± standard error over seeds", or with several objectives "hypervolume
// from auc 0.78 (derived), fit_s 10 (job), larger is better; mean ± standard error over seeds".
std::string measure_said(const json& data, const json& task) {
  if (data.value("measure", "best") != "hypervolume") return data["direction"].get<std::string>() + "; mean best ± standard error over seeds";
  std::string text = "hypervolume of the feasible results so far";
  if (task.contains("reference")) {
    text += " from ";
    for (std::size_t i = 0; i < task["reference"].size(); ++i) {
      text += (i ? ", " : "") + data["objectives"][i]["name"].get<std::string>() + " " + format_number(task["reference"][i].get<double>()) +
              " (" + task["reference_from"][i].get<std::string>() + ")";
    }
  }
  return text + ", larger is better; mean ± standard error over seeds";
}

}  // namespace

std::string comparison_summary(const json& data) {
  std::ostringstream out;
  const std::string first = data["methods"].front().get<std::string>();
  char line[256];
  for (const json& task : data["tasks"]) {
    const auto trials = task["trials"].get<std::size_t>();
    out << "task " << task["name"].get<std::string>() << " (" << measure_said(data, task)
        << "; in brackets " << first << "'s paired advantage, > 0: " << first << " better)\n";
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
  // The verdict over every task and seed, and what each method spent per run.
  if (data.contains("verdict")) {
    for (const auto& [method, rows] : data["verdict"].items()) {
      out << "verdict, " << first << " against " << method << " (the mean paired difference of the "
          << (data.value("measure", "best") == "hypervolume" ? "hypervolume" : "best") << " so far over every "
          << "task and seed, ± its standard error; > 0: " << first << " better):\n";
      for (const json& row : rows) out << "  " << row["sentence"].get<std::string>() << "\n";
    }
    out << "spent per run (mean):";
    for (const auto& [method, s] : data["spent"].items()) {
      out << "  " << method << " " << format_number(s["trials"].get<double>()) << " trials";
      if (s["steps"].get<double>() > 0) out << ", " << format_number(s["steps"].get<double>()) << " steps";
      out << ", " << format_number(s["seconds"].get<double>()) << " s of trial time;";
    }
    out << "\n";
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
