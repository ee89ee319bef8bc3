// lbo-test-objective: a fast, scriptable objective for tests and benchmarks.
//
//   lbo-test-objective [--function zero|sum|branin|quadratic|steps] [--via stdout|file] [--context FILE]
//                      [--sleep-ms MS] [--sleep-ms-per-value MS] [--metrics on] [--reports N]
//                      [--report-ms MS] [--fail-corner R] [--pareto on]
//
// Reads $LBO_PARAMS_FILE (JSON). The value is a known function of the numeric parameters;
// `quadratic` takes its task's (a, b, c) from the JSON object in FILE (a task's dataset);
// `branin` takes any of its six parameters (a, b, c, r, s, t) from it, the rest standard, so
// a file per task makes a sequence of related Branin functions (LBO's lifelong protocol);
// `steps` reports only "steps": f_s(x) = 1 - (x - c_s)² for c = 0.15, 0.5, 0.85 (a stepwise
// objective whose three steps have different optima);
// these optional parameters steer the run itself:
//   sleep_ms  (number)  sleep first (--sleep-ms sleeps that long whatever the parameters say;
//                       --sleep-ms-per-value MS sleeps MS × the value first, so that trials of
//                       one round end in the order of their values)
//   outcome   (string)  "ok" (default), "fail" (exit 3), "crash" (SIGSEGV), "hang" (ignore
//                       SIGTERM and sleep), "garbage" (no JSON), "nan" (objective NaN),
//                       "silent" (exit 0, print nothing)
// With --fail-corner R, a point whose x1 and x2 scaled to [0, 1] on Branin's box
// ((x1 + 5)/15, x2/15) lie within R of the corner (1, 1) fails (exit 3, "CUDA out of memory" on
// stderr): a region where configurations always fail, as a network too wide for the GPU.
// The result goes to stdout as the last line, or to $LBO_RESULT_FILE with --via file. With
// --metrics on, an ok result also carries "metrics": {"twice": 2·value, "function": name}. With
// --pareto on, the result gives two objectives by name, {"value": v, "cost": c}, c the sum of
// the squares of the numeric parameters (a trade-off against any minimum away from 0); with
// --metrics on too, and "metrics": {"twice": 2·value}.
// With --reports N, an ok trial first reports steps 1..N (`lbo:report` lines), step s with value
// value·s/N and metrics {"s": s}, --report-ms apart; outcome "bad-reports" reports steps 2, 1
// (backwards), 2 (again), a NaN, a line that is no JSON, then 3. Under [early_stopping] mode =
// "promotion" it reports from $LBO_RESUME_STEP + 1, writes each step to $LBO_CHECKPOINT_DIR/step
// before reporting it, fails (exit 4) when a resumed attempt finds an earlier step there, and
// ends after $LBO_TARGET_STEP when that is below $LBO_MAX_STEP.
//
//   lbo-test-objective --exec-forever
//
// execs itself without end: a process that a look at /proc often finds in the middle of an
// execve (the sweeps of escaped processes must see it).

#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numbers>
#include <string>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

double number(const nlohmann::json& params, const char* key) {
  const auto it = params.find(key);
  return it != params.end() && it->is_number() ? it->get<double>() : 0.0;
}

// Branin–Hoo on [-5, 10] × [0, 15]; global minimum 0.397887 at (-π, 12.275), (π, 2.275),
// (9.42478, 2.475).
double branin(double x1, double x2, const nlohmann::json& context) {
  constexpr double pi = std::numbers::pi;
  const auto param = [&](const char* key, double standard) {
    const auto it = context.find(key);
    return it != context.end() && it->is_number() ? it->get<double>() : standard;
  };
  const double a = param("a", 1), b = param("b", 5.1 / (4 * pi * pi)), c = param("c", 5 / pi), r = param("r", 6),
               s = param("s", 10), t = param("t", 1 / (8 * pi));
  const double u = x2 - b * x1 * x1 + c * x1 - r;
  return a * u * u + s * (1 - t) * std::cos(x1) + s;
}

double evaluate(const std::string& function, const nlohmann::json& params, const nlohmann::json& context) {
  if (function == "zero") return 0.0;
  if (function == "branin") return branin(number(params, "x1"), number(params, "x2"), context);
  double sum = 0, squares = 0;
  for (const auto& [key, value] : params.items()) {
    if (key == "sleep_ms" || key == "outcome" || !value.is_number()) continue;
    sum += value.get<double>();
    squares += value.get<double>() * value.get<double>();
  }
  if (function == "quadratic") {
    // ABLR's quadratic family f(x) = 0.5 a ‖x‖² + b Σx + 3c with (a, b, c) from the params.
    const double a = number(context, "a"), b = number(context, "b"), c = number(context, "c");
    return 0.5 * a * squares + b * sum + 3 * c;
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--exec-forever") == 0) {
    ::execv("/proc/self/exe", argv);
    return 1;
  }
  std::string function = "sum", via = "stdout";
  bool metrics = false;
  bool pareto = false;
  double sleep_ms = -1, report_ms = 0, sleep_ms_per_value = 0, fail_corner = 0;
  int reports = 0;
  nlohmann::json context = nlohmann::json::object();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--function") == 0) function = argv[i + 1];
    if (std::strcmp(argv[i], "--via") == 0) via = argv[i + 1];
    if (std::strcmp(argv[i], "--sleep-ms") == 0) sleep_ms = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--metrics") == 0) metrics = std::strcmp(argv[i + 1], "on") == 0;
    if (std::strcmp(argv[i], "--pareto") == 0) pareto = std::strcmp(argv[i + 1], "on") == 0;
    if (std::strcmp(argv[i], "--reports") == 0) reports = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--report-ms") == 0) report_ms = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--fail-corner") == 0) fail_corner = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--sleep-ms-per-value") == 0) sleep_ms_per_value = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--context") == 0) {
      std::ifstream file(argv[i + 1]);
      context = nlohmann::json::parse(file, nullptr, false);
      if (!context.is_object()) {
        std::cerr << "cannot parse the context file " << argv[i + 1] << "\n";
        return 2;
      }
    }
  }
  const char* params_file = std::getenv("LBO_PARAMS_FILE");
  if (params_file == nullptr) {
    std::cerr << "LBO_PARAMS_FILE is not set\n";
    return 2;
  }
  std::ifstream in(params_file);
  const nlohmann::json params = nlohmann::json::parse(in, nullptr, false);
  if (params.is_discarded()) {
    std::cerr << "cannot parse " << params_file << "\n";
    return 2;
  }
  const std::string outcome = params.value("outcome", std::string("ok"));
  if (const double ms = sleep_ms >= 0 ? sleep_ms : number(params, "sleep_ms"); ms > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  }
  if (outcome == "fail") {
    std::cerr << "test objective: failing on purpose\n";
    return 3;
  }
  if (fail_corner > 0 && params.contains("x1") && params.contains("x2")) {
    const double u = (10 - number(params, "x1")) / 15, v = (15 - number(params, "x2")) / 15;
    if (u * u + v * v < fail_corner * fail_corner) {
      std::cerr << "RuntimeError: CUDA out of memory (test objective: the failing corner)\n";
      return 3;
    }
  }
  if (outcome == "crash") std::raise(SIGSEGV);
  if (outcome == "hang") {
    std::signal(SIGTERM, SIG_IGN);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (outcome == "silent") return 0;
  if (outcome == "garbage") {
    std::cout << "this is not JSON\n";
    return 0;
  }
  const double value = outcome == "nan" ? std::nan("") : evaluate(function, params, context);
  if (sleep_ms_per_value > 0 && value > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms_per_value * value));
  }
  if (outcome == "bad-reports") {
    std::cout << "lbo:report {\"step\": 2, \"value\": 1}\nlbo:report {\"step\": 1, \"value\": 1}\n"
                 "lbo:report {\"step\": 2, \"value\": 1}\nlbo:report {\"step\": 3, \"value\": NaN}\n"
                 "lbo:report not json\nlbo:report {\"step\": 3, \"value\": 2}"
              << std::endl;
  }
  std::cout.precision(17);
  const auto step_variable = [](const char* name, int otherwise) {
    const char* text = std::getenv(name);
    return text != nullptr && *text != '\0' ? std::atoi(text) : otherwise;
  };
  const int resume = step_variable("LBO_RESUME_STEP", 0);
  const int target = step_variable("LBO_TARGET_STEP", reports);
  const bool paused_at_target = target < step_variable("LBO_MAX_STEP", reports);
  const char* checkpoint_dir = std::getenv("LBO_CHECKPOINT_DIR");
  const std::string checkpoint = checkpoint_dir != nullptr ? std::string(checkpoint_dir) + "/step" : std::string();
  if (!checkpoint.empty() && resume > 0) {
    int saved = -1;
    std::ifstream(checkpoint) >> saved;
    if (saved < resume) {
      std::cerr << "the checkpoint holds step " << saved << ", before the resume step " << resume << "\n";
      return 4;
    }
  }
  for (int step = resume + 1; step <= reports && std::isfinite(value); ++step) {
    if (!checkpoint.empty()) {
      // A new file renamed over the old: lbo may end the attempt at any moment (a stop of the
      // run, a timeout), and a half-written checkpoint would lose the step.
      std::ofstream(checkpoint + ".tmp") << step << "\n";
      std::rename((checkpoint + ".tmp").c_str(), checkpoint.c_str());
    }
    std::cout << "lbo:report {\"step\": " << step << ", \"value\": " << value * step / reports << ", \"metrics\": {\"s\": "
              << step << "}}" << std::endl;
    if (report_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(report_ms));
    if (paused_at_target && step >= target) return 0;  // lbo pauses it here
  }
  char line[256];
  if (function == "steps") {
    const double x = number(params, "x");
    const auto f = [x](double c) { return 1.0 - (x - c) * (x - c); };
    std::snprintf(line, sizeof line, "{\"steps\": [%.17g, %.17g, %.17g]}", f(0.15), f(0.5), f(0.85));
  } else if (std::isnan(value)) {
    std::snprintf(line, sizeof line, "{\"objective\": NaN}");
  } else if (pareto) {
    double cost = 0;
    for (const auto& [name, v] : params.items()) cost += v.is_number() ? v.get<double>() * v.get<double>() : 0.0;
    if (metrics) {
      std::snprintf(line, sizeof line, "{\"value\": %.17g, \"cost\": %.17g, \"metrics\": {\"twice\": %.17g}}", value, cost, 2 * value);
    } else {
      std::snprintf(line, sizeof line, "{\"value\": %.17g, \"cost\": %.17g}", value, cost);
    }
  } else if (metrics) {
    std::snprintf(line, sizeof line, "{\"objective\": %.17g, \"metrics\": {\"twice\": %.17g, \"function\": \"%s\"}}", value,
                  2 * value, function.c_str());
  } else {
    std::snprintf(line, sizeof line, "{\"objective\": %.17g}", value);
  }
  if (via == "file") {
    const char* result_file = std::getenv("LBO_RESULT_FILE");
    std::ofstream(result_file != nullptr ? result_file : "result.json") << line << "\n";
  } else {
    std::cout << line << "\n";
  }
  return 0;
}
