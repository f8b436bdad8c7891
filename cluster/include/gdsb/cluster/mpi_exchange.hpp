// The only MPI code of the project (target gdsb::cluster_mpi): barriers between phases and
// the summaries' trip to rank 0, each with a deadline, so a rank that left or hangs is
// reported instead of hanging the run. Summaries travel point to point (MPI_Isend, rank 0
// polls MPI_Iprobe) rather than through MPI_Gatherv: a collective that times out cannot
// say which rank is missing, a per-rank message can.
#pragma once

#include <atomic>
#include <functional>

#include <optional>
#include <string>
#include <vector>

namespace gdsb::cluster::mpi {

// MPI_Init_thread (MPI_THREAD_FUNNELED) and MPI_Finalize. Without mpirun, a singleton of
// one rank. finalize() is not called when abort_after() was.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  std::string processor_name() const;
  // MPI_Ibarrier polled until the deadline; false when it did not complete in time (a rank
  // left or hangs). Once a barrier failed, later ones return false at once.
  bool barrier(double timeout_s);
  // Every rank sends its summary to rank 0; rank 0 returns one entry per rank (its own
  // included), nullopt for a rank whose summary did not come before the deadline.
  std::vector<std::optional<std::string>> gather(const std::string& mine, double timeout_s);
  // Every rank's text to every rank (MPI_Iallgather of the lengths, MPI_Iallgatherv of the
  // texts, polled until the deadline), indexed by rank; nullopt when a rank did not take part
  // in time (the session is then broken).
  std::optional<std::vector<std::string>> all_gather(const std::string& mine, double timeout_s);
  // One stonewalled point of the shared-storage phase (IOR's stonewalling). After a barrier,
  // the `participants` (ascending ranks, rank 0 among them: the ranks of the point's nodes) run work(stop) on a thread of their own (this thread keeps the
  // MPI calls: MPI_THREAD_FUNNELED); work returns true when it ended by its own limit (its
  // bytes or its time), false when stopped. With `stonewall`, the first rank to reach its limit
  // ends the point for every rank: it tells rank 0 (tag END), rank 0 sets every participant's
  // stop (tag STOP). Without it every rank runs to its own end (a checkpoint). Each participant
  // sends exactly one END and receives exactly one STOP, so nothing of one point is left for
  // the next. `user_stop` (SIGINT) stops the local work too. False when a rank did not answer
  // within timeout_s (the session is then broken, as after a failed barrier).
  bool stonewall_point(const std::vector<int>& participants, bool stonewall, double timeout_s,
                       const std::function<bool(const std::atomic<bool>& stop)>& work,
                       const std::atomic<bool>* user_stop);
  // Every rank says whether its own step failed; each learns the lowest rank that failed (-1:
  // none), so all ranks go on or stop alike. nullopt when a rank did not answer within
  // timeout_s (the session is then broken, as after a failed barrier).
  std::optional<int> first_failed_rank(bool failed_here, double timeout_s);
  bool broken() const { return broken_; }
  void finalize();  // MPI_Finalize now (the destructor then does nothing)
  // MPI_Abort: ends every rank (those stuck waiting for a lost one too) with this code.
  [[noreturn]] void abort_with(int code);

 private:
  int rank_ = 0, size_ = 1;
  bool broken_ = false;
  bool finalized_ = false;
  int reduce_in_ = 0, reduce_out_ = 0;  // first_failed_rank's buffers: a request left pending
                                        // at its deadline may still write them
  bool wait(void* request, double timeout_s);  // an MPI_Request polled until the deadline
};

}  // namespace gdsb::cluster::mpi
