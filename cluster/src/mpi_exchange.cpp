#include "gdsb/cluster/mpi_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace gdsb::cluster::mpi {
namespace {

constexpr int kSummaryTag = 1313;
constexpr int kEndTag = 1414;   // a participant's work ended (one byte: 1 = by its own limit)
constexpr int kStopTag = 1415;  // rank 0 to a participant: stop now (or: the point is over)
using Clock = std::chrono::steady_clock;

Clock::time_point deadline_in(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

void nap() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

}  // namespace

Session::Session(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() { finalize(); }

void Session::finalize() {
  if (finalized_) return;
  finalized_ = true;
  MPI_Finalize();
}

std::string Session::processor_name() const {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, static_cast<std::size_t>(len));
}

bool Session::wait(void* request, double timeout_s) {
  auto* req = static_cast<MPI_Request*>(request);
  const auto deadline = deadline_in(timeout_s);
  int done = 0;
  while (true) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (Clock::now() > deadline) break;
    nap();
  }
  broken_ = true;  // the request stays pending; the run ends with abort_with()
  return false;
}

std::optional<int> Session::first_failed_rank(bool failed_here, double timeout_s) {
  if (broken_) return std::nullopt;
  reduce_in_ = failed_here ? rank_ : size_;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Iallreduce(&reduce_in_, &reduce_out_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
  const auto deadline = deadline_in(timeout_s);
  int done = 0;
  while (true) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return reduce_out_ < size_ ? reduce_out_ : -1;
    if (Clock::now() > deadline) break;
    nap();
  }
  broken_ = true;  // the request stays pending; the run ends with abort_with()
  return std::nullopt;
}

bool Session::barrier(double timeout_s) {
  if (broken_) return false;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  return wait(&req, timeout_s);
}

std::optional<std::vector<std::string>> Session::all_gather(const std::string& mine, double timeout_s) {
  if (broken_) return std::nullopt;
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), at(static_cast<std::size_t>(size_));
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &req);
  if (!wait(&req, timeout_s)) return std::nullopt;
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) at[r] = total, total += lengths[r];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), at.data(), MPI_CHAR, MPI_COMM_WORLD, &req);
  if (!wait(&req, timeout_s)) return std::nullopt;
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(at[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

std::vector<std::optional<std::string>> Session::gather(const std::string& mine, double timeout_s) {
  const auto deadline = deadline_in(timeout_s);
  if (rank_ != 0) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, 0, kSummaryTag, MPI_COMM_WORLD, &req);
    int done = 0;
    while (true) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) break;
      if (Clock::now() > deadline) {
        broken_ = true;
        break;
      }
      nap();
    }
    return {};
  }
  std::vector<std::optional<std::string>> out(static_cast<std::size_t>(size_));
  out[0] = mine;
  int received = 1;
  while (received < size_ && Clock::now() <= deadline) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kSummaryTag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      nap();
      continue;
    }
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    std::string buf(static_cast<std::size_t>(count), '\0');
    MPI_Recv(buf.data(), count, MPI_CHAR, st.MPI_SOURCE, kSummaryTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!out[static_cast<std::size_t>(st.MPI_SOURCE)]) ++received;
    out[static_cast<std::size_t>(st.MPI_SOURCE)] = std::move(buf);
  }
  if (received < size_) broken_ = true;
  return out;
}

namespace {

// Rank 0's side of a point: counts the participants' ENDs (its own included), sends every
// other participant one STOP, at the first end by a limit (stonewall) or once all ended (the
// release), and waits for those sends. False when the deadline passed first.
bool lead_point(const std::vector<int>& participants, bool stonewall, Clock::time_point deadline, std::atomic<bool>& stop,
                const std::atomic<bool>& done, const bool& reached_limit, const std::atomic<bool>* user_stop) {
  int ends = 0;
  bool stop_sent = false, own_counted = false;
  std::vector<MPI_Request> sends;
  static const char kNothing = 0;
  const auto send_stops = [&] {
    stop_sent = true;
    stop.store(true);
    sends.reserve(participants.size());
    for (int r : participants) {
      if (r == 0) continue;
      sends.emplace_back(MPI_REQUEST_NULL);
      MPI_Isend(&kNothing, 0, MPI_CHAR, r, kStopTag, MPI_COMM_WORLD, &sends.back());
    }
  };
  bool ok = true;
  while (true) {
    if (user_stop != nullptr && user_stop->load()) stop.store(true);
    if (done.load() && !own_counted) {
      own_counted = true;
      if (stonewall && reached_limit && !stop_sent) send_stops();
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kEndTag, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      char by_limit = 0;
      MPI_Recv(&by_limit, 1, MPI_CHAR, st.MPI_SOURCE, kEndTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++ends;
      if (stonewall && by_limit && !stop_sent) send_stops();
      continue;
    }
    if (own_counted && ends == static_cast<int>(participants.size()) - 1) {
      if (!stop_sent) send_stops();  // the release: every participant waits for one STOP
      break;
    }
    if (Clock::now() > deadline) {
      ok = false;
      break;
    }
    nap();
  }
  if (!sends.empty()) {
    while (ok) {
      int all = 0;
      MPI_Testall(static_cast<int>(sends.size()), sends.data(), &all, MPI_STATUSES_IGNORE);
      if (all) break;
      if (Clock::now() > deadline) ok = false;
      nap();
    }
  }
  return ok;
}

// Another participant's side: one END to rank 0 when its work is done (whether by its own
// limit), and one STOP from rank 0, which stops its work if it still runs. False when the
// deadline passed first.
bool follow_point(Clock::time_point deadline, std::atomic<bool>& stop, const std::atomic<bool>& done,
                  const bool& reached_limit, const std::atomic<bool>* user_stop) {
  MPI_Request end_req = MPI_REQUEST_NULL;
  char by_limit = 0;
  bool end_sent = false, end_done = false, got_stop = false;
  while (true) {
    if (user_stop != nullptr && user_stop->load()) stop.store(true);
    if (done.load() && !end_sent) {
      end_sent = true;
      by_limit = reached_limit ? 1 : 0;
      MPI_Isend(&by_limit, 1, MPI_CHAR, 0, kEndTag, MPI_COMM_WORLD, &end_req);
    }
    if (end_sent && !end_done) {
      int flag = 0;
      MPI_Test(&end_req, &flag, MPI_STATUS_IGNORE);
      end_done = flag != 0;
    }
    if (!got_stop) {
      int flag = 0;
      MPI_Iprobe(0, kStopTag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        char none = 0;
        MPI_Recv(&none, 0, MPI_CHAR, 0, kStopTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        got_stop = true;
        stop.store(true);
      }
    }
    if (end_done && got_stop) return true;
    if (Clock::now() > deadline) return false;
    nap();
  }
}

}  // namespace

bool Session::stonewall_point(const std::vector<int>& participants, bool stonewall, double timeout_s,
                              const std::function<bool(const std::atomic<bool>&)>& work,
                              const std::atomic<bool>* user_stop) {
  if (!barrier(timeout_s)) return false;
  if (!std::binary_search(participants.begin(), participants.end(), rank_)) return true;
  // The I/O on a worker thread; this thread keeps the MPI calls (MPI_THREAD_FUNNELED).
  std::atomic<bool> stop{false}, done{false};
  bool reached_limit = false;
  std::thread worker([&] {
    reached_limit = work(stop);
    done.store(true);
  });
  const auto deadline = deadline_in(timeout_s);
  const bool ok = rank_ == 0 ? lead_point(participants, stonewall, deadline, stop, done, reached_limit, user_stop)
                             : follow_point(deadline, stop, done, reached_limit, user_stop);
  stop.store(true);
  worker.join();
  if (!ok) broken_ = true;
  return ok;
}

void Session::abort_with(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace gdsb::cluster::mpi
