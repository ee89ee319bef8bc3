#include "lbo/orchestrator/ledger.hpp"

#include <utility>
#include <variant>

namespace lbo::orchestrator {

Ledger::Ledger(JournalWriter& journal, RunState& state, std::function<void(const IoError&)> failed)
    : journal_(journal), state_(state), failed_(std::move(failed)) {}

bool Ledger::record(const JournalRecord& record, Write write) {
  try {
    journal_.append(record);
    if (write == Write::synced) journal_.sync();
  } catch (const IoError& e) {
    failed_(e);
    if (std::holds_alternative<TrialFinished>(record)) apply(record);
    return false;
  }
  apply(record);
  return true;
}

void Ledger::open(const RunStarted& started) {
  journal_.append(started);
  journal_.sync();
  apply(started);
}

void Ledger::commit() {
  try {
    journal_.sync();
  } catch (const IoError& e) {
    failed_(e);
  }
}

void Ledger::apply(const JournalRecord& record) {
  state_.apply(record);
  for (Listener* listener : listeners_) listener->applied(record, state_);
}

}  // namespace lbo::orchestrator
