#pragma once
// The commands of the `lbo` command line (private to app/); cli.cpp parses the arguments into
// their options and maps what they throw to exit statuses.

#include <optional>
#include <string>
#include <vector>

namespace lbo::cluster {
class MpiSession;
}

namespace lbo::jobs {
struct JobSpec;
}

namespace lbo::orchestrator {

struct RunOptions {
  std::string job_file;
  std::string run_root = "runs";
  bool fresh = false;
  std::optional<int> local_slots;
  std::optional<int> simulate;  ///< virtual slots ([workers] simulate)
  std::optional<double> checkpoint_every_s;
  bool sync = false;
  std::optional<std::string> deadline;
  bool no_lock = false;
  std::string resume_command;
};

struct AddTaskOptions {
  std::string run_dir;
  std::string name;
  std::optional<std::string> dataset;
  std::optional<int> budget;
  bool no_lock = false;
};

struct ReportOptions {
  std::vector<std::string> run_dirs;
  std::optional<std::string> out;
};

struct CompareOptions {
  RunOptions run;                    ///< the job file and how each of its runs runs
  std::vector<std::string> methods;  ///< surrogates, the first compared with each other one
  int seeds = 5;
};

/// lbo run: the job in its run directory, new or resumed; the master on local slots or MPI
/// worker ranks (`mpi`, null without a launcher).
int run_command(const RunOptions& options, cluster::MpiSession* mpi);
/// What lbo run does with the job once it is read (the options' job file names it in messages).
int run_job(jobs::JobSpec job, const RunOptions& options, cluster::MpiSession* mpi);
/// The checks of the command line's overrides of job-file keys (InputError).
void check_run_options(const RunOptions& options);
/// lbo compare: the job run with each surrogate and seed (each run resumable), then one
/// comparison of them: compare.csv and compare.html.
int compare_command(const CompareOptions& options, cluster::MpiSession* mpi);
/// lbo validate: the job file and its warm start, nothing run or written.
int validate_command(const std::string& job_file);
/// lbo add-task: a running master takes the task from a request file within a second or so; a
/// stopped run takes it into its journal here, under the run's lock.
int add_task_command(const AddTaskOptions& options);
/// lbo report: one run's report.html, or one page for several runs (-o).
int report_command(const ReportOptions& options);

}  // namespace lbo::orchestrator
