#pragma once
// Runs a job in this process (Master + local slots) and reads back what it wrote.

#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>
#include <map>
#include <sstream>

#include "lbo/cluster/local_transport.hpp"
#include "lbo/jobs/csv.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "test_support.hpp"

namespace lbo::testing {

using Row = std::map<std::string, std::string>;

/// A CSV file lbo wrote as one map per row (jobs::parse_csv, tested on its own); every row must
/// have the header's width.
inline std::vector<Row> read_csv(const std::filesystem::path& path) {
  const jobs::CsvTable table = jobs::parse_csv(read_text(path));
  std::vector<Row> rows;
  for (const jobs::CsvRecord& record : table.records) {
    EXPECT_EQ(record.fields.size(), table.header.size()) << "line " << record.line << " of " << path.string();
    Row row;
    for (std::size_t i = 0; i < table.header.size() && i < record.fields.size(); ++i) row[table.header[i]] = record.fields[i];
    rows.push_back(row);
  }
  return rows;
}

struct RunOutput {
  int exit_code = -1;
  std::vector<Row> rows;
  orchestrator::JournalContents journal;
  std::string log;
  std::filesystem::path run_dir;
};

/// Runs `text` (a job file) with `slots` local slots under `run_root` (default <dir>/runs),
/// resuming the run there if there is one. `transport`: another transport than local slots.
inline RunOutput run_job(const std::string& text, const ScratchDir& dir, int slots = 2,
                         orchestrator::MasterOptions options = {}, std::filesystem::path run_root = {},
                         orchestrator::TransportFactory transport = {}) {
  const jobs::JobSpec job = job_from(text, dir.path());
  orchestrator::RunDirectory run_dir =
      orchestrator::RunDirectory::open(run_root.empty() ? dir.path() / "runs" : run_root, job, false);
  std::optional<orchestrator::RecoveredRun> recovered;
  if (run_dir.resuming()) recovered = orchestrator::recover_run(run_dir.path());
  if (!transport) {
    transport = [slots](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return std::make_unique<cluster::LocalTransport>(io, slots, std::move(done));
    };
  }
  std::FILE* log = std::tmpfile();
  RunOutput out;
  {
    orchestrator::Console console(log);
    orchestrator::Master master(job, run_dir, std::move(transport), console, options, std::move(recovered));
    out.exit_code = master.run();
  }
  std::rewind(log);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, log)) > 0;) out.log.append(buffer, n);
  std::fclose(log);
  out.rows = read_csv(run_dir.results_csv());
  out.journal = orchestrator::read_journal(run_dir.journal());
  out.run_dir = run_dir.path();
  return out;
}

/// A thread that sends this process `signal_number` `delay` after `results` (a results.csv) has
/// `rows` rows, looking every 10 ms for up to a minute.
inline std::thread signal_after_rows(int signal_number, std::filesystem::path results, std::size_t rows,
                                     std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  return std::thread([=] {
    for (int i = 0; i < 6000; ++i) {
      std::ifstream in(results);
      const auto lines = static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
      if (lines >= rows + 1) {
        std::this_thread::sleep_for(delay);
        ::kill(::getpid(), signal_number);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

}  // namespace lbo::testing
