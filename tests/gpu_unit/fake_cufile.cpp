#include "fake_cufile.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

namespace gdsb::gpu::testing {

using cufile::CUfileError_t;

struct FakeCufile::State {
  FakeGpuService* gpu = nullptr;
  FakeCufileOptions opt;
  mutable std::mutex mu;
  std::vector<std::string> calls;
  bool open = false;
  int opens = 0;
  std::vector<std::string> misuse;
  std::condition_variable handle_cv;
  bool handle_rendezvous_given_up = false;
  std::map<void*, int> handles;  // handle -> fd
  std::set<const void*> buffers;
  std::set<void*> streams;
  std::set<void*> async_streams;  // streams async calls were made on
  std::condition_variable async_cv;
  unsigned async_running = 0;
  unsigned async_peak = 0;
  bool rendezvous_given_up = false;
  struct Batch {
    unsigned capacity = 0;
    unsigned in_flight = 0;
    std::deque<cufile::CUfileIOEvents_t> done;
  };
  std::map<void*, std::unique_ptr<Batch>> batches;
  int io_seq = 0;
  int stream_register_seq = 0;
  int next_handle = 1;

  void call(std::string c) {
    std::lock_guard lk(mu);
    calls.push_back(std::move(c));
  }
  // An async I/O starts running on its stream (see FakeCufileOptions::async_rendezvous).
  void async_begin() {
    if (opt.async_delay.count() > 0) std::this_thread::sleep_for(opt.async_delay);
    std::unique_lock lk(mu);
    async_peak = std::max(async_peak, ++async_running);
    async_cv.notify_all();
    const unsigned want = opt.async_rendezvous;
    if (want == 0 || rendezvous_given_up) return;
    if (!async_cv.wait_for(lk, std::chrono::seconds(2), [&] { return async_peak >= want; })) {
      rendezvous_given_up = true;  // fail the test's assertion fast, not with a hang
    }
  }
  void async_end() {
    std::lock_guard lk(mu);
    --async_running;
  }
  // Does one I/O against the fd behind fh; returns bytes or -errno / injected result.
  long long io(void* fh, bool read, void* buf, std::size_t size, off_t off) {
    int fd = -1;
    {
      std::lock_guard lk(mu);
      auto it = handles.find(fh);
      if (it == handles.end()) return -5027;
      fd = it->second;
      if (opt.fail_io_at >= 0 && io_seq++ == opt.fail_io_at) return opt.fail_io_result;
    }
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = read ? ::pread(fd, static_cast<char*>(buf) + done, size - done,
                                       off + static_cast<off_t>(done))
                             : ::pwrite(fd, static_cast<const char*>(buf) + done, size - done,
                                        off + static_cast<off_t>(done));
      if (n < 0) return -errno;
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return static_cast<long long>(done);
  }
};

namespace {

FakeCufile::State* g_current = nullptr;  // test-only: the C table needs a place to look

CUfileError_t ok() { return {}; }
CUfileError_t err(int e) { return {e, 0}; }

CUfileError_t f_driver_open() {
  auto& s = FakeCufile::current();
  s.call("DriverOpen");
  if (s.opt.driver_open_error != 0) return err(s.opt.driver_open_error);
  {
    std::lock_guard lk(s.mu);
    if (s.open) s.misuse.push_back("cuFileDriverOpen while the driver is open");
    s.open = true;
    ++s.opens;
  }
  if (!s.opt.log_dir_line.empty()) {
    // Like cuFile: log into logging.dir of the configuration CUFILE_ENV_PATH_JSON names.
    if (const char* cfg = std::getenv("CUFILE_ENV_PATH_JSON")) {
      const std::string dir = std::string(cfg).substr(0, std::string(cfg).rfind('/'));
      std::ofstream(dir + "/cufile.log") << s.opt.log_dir_line << "\n";
    }
  }
  return ok();
}
CUfileError_t f_driver_close() {
  auto& s = FakeCufile::current();
  s.call("DriverClose");
  std::lock_guard lk(s.mu);
  if (!s.handles.empty() || !s.buffers.empty())
    s.misuse.push_back("cuFileDriverClose with " + std::to_string(s.handles.size()) + " file(s) and " +
                       std::to_string(s.buffers.size()) + " buffer(s) registered");
  s.open = false;
  return ok();
}
CUfileError_t f_props(cufile::CUfileDrvProps_t* p) {
  auto& s = FakeCufile::current();
  s.call("DriverGetProperties");
  {
    std::lock_guard lk(s.mu);
    if (!s.open) s.misuse.push_back("cuFileDriverGetProperties while the driver is closed");
  }
  *p = cufile::CUfileDrvProps_t{};
  p->nvfs.dstatusflags = s.opt.dstatusflags;
  p->nvfs.dcontrolflags = 1U << cufile::kControlAllowCompatMode;
  p->fflags = (1U << cufile::kFeatureBatchIo) | (1U << cufile::kFeatureStreams) | s.opt.extra_fflags;
  return ok();
}
CUfileError_t f_handle_register(cufile::CUfileHandle_t* h, cufile::CUfileDescr_t* d) {
  auto& s = FakeCufile::current();
  s.call("HandleRegister");
  if (s.opt.handle_register_error != 0) return err(s.opt.handle_register_error);
  if (d->type != cufile::kHandleTypeOpaqueFd) return err(5022);
  std::unique_lock lk(s.mu);
  if (!s.open) s.misuse.push_back("cuFileHandleRegister while the driver is closed");
  void* handle = reinterpret_cast<void*>(static_cast<uintptr_t>(s.next_handle++));
  s.handles[handle] = d->handle.fd;
  *h = handle;
  s.handle_cv.notify_all();
  const unsigned want = s.opt.handle_rendezvous;
  if (want > 0 && !s.handle_rendezvous_given_up &&
      !s.handle_cv.wait_for(lk, std::chrono::seconds(2), [&] { return s.handles.size() >= want; })) {
    s.handle_rendezvous_given_up = true;  // a run that never overlaps fails the test, not hangs it
  }
  return ok();
}
void f_handle_deregister(cufile::CUfileHandle_t h) {
  auto& s = FakeCufile::current();
  s.call("HandleDeregister");
  std::lock_guard lk(s.mu);
  s.handles.erase(h);
}
CUfileError_t f_buf_register(const void* p, std::size_t, int) {
  auto& s = FakeCufile::current();
  s.call("BufRegister");
  if (s.opt.buf_register_error != 0) return err(s.opt.buf_register_error);
  std::lock_guard lk(s.mu);
  if (!s.buffers.insert(p).second) return err(5023);
  return ok();
}
CUfileError_t f_buf_deregister(const void* p) {
  auto& s = FakeCufile::current();
  s.call("BufDeregister");
  std::lock_guard lk(s.mu);
  return s.buffers.erase(p) > 0 ? ok() : err(5024);
}
ssize_t f_read(cufile::CUfileHandle_t h, void* buf, std::size_t size, off_t off, off_t boff) {
  auto& s = FakeCufile::current();
  s.call("Read");
  return static_cast<ssize_t>(s.io(h, true, static_cast<char*>(buf) + boff, size, off));
}
ssize_t f_write(cufile::CUfileHandle_t h, const void* buf, std::size_t size, off_t off, off_t boff) {
  auto& s = FakeCufile::current();
  s.call("Write");
  return static_cast<ssize_t>(
      s.io(h, false, const_cast<char*>(static_cast<const char*>(buf)) + boff, size, off));
}
CUfileError_t async_io(bool read, cufile::CUfileHandle_t h, void* buf, std::size_t* size,
                       off_t* off, off_t* boff, ssize_t* done, cufile::CUstream stream) {
  auto& s = FakeCufile::current();
  s.call(read ? "ReadAsync" : "WriteAsync");
  {
    std::lock_guard lk(s.mu);
    if (s.streams.count(stream) == 0) return err(5022);  // our paths always register
    s.async_streams.insert(stream);
  }
  FakeCufile::State* st = &s;
  // Arguments are read when the stream gets there, as cuFile documents.
  s.gpu->launch_host_func(StreamHandle{stream}, [st, read, h, buf, size, off, boff, done] {
    st->async_begin();
    *done = static_cast<ssize_t>(st->io(h, read, static_cast<char*>(buf) + *boff, *size, *off));
    st->async_end();
  });
  return ok();
}
CUfileError_t f_read_async(cufile::CUfileHandle_t h, void* b, std::size_t* sz, off_t* o,
                           off_t* bo, ssize_t* d, cufile::CUstream st) {
  return async_io(true, h, b, sz, o, bo, d, st);
}
CUfileError_t f_write_async(cufile::CUfileHandle_t h, void* b, std::size_t* sz, off_t* o,
                            off_t* bo, ssize_t* d, cufile::CUstream st) {
  return async_io(false, h, b, sz, o, bo, d, st);
}
CUfileError_t f_stream_register(cufile::CUstream st, unsigned) {
  auto& s = FakeCufile::current();
  s.call("StreamRegister");
  std::lock_guard lk(s.mu);
  if (s.opt.stream_register_fail_at >= 0 && s.stream_register_seq++ == s.opt.stream_register_fail_at) {
    return err(5022);
  }
  s.streams.insert(st);
  return ok();
}
CUfileError_t f_stream_deregister(cufile::CUstream st) {
  auto& s = FakeCufile::current();
  s.call("StreamDeregister");
  std::lock_guard lk(s.mu);
  s.streams.erase(st);
  return ok();
}
CUfileError_t f_batch_setup(cufile::CUfileBatchHandle_t* b, unsigned nr) {
  auto& s = FakeCufile::current();
  s.call("BatchIOSetUp");
  auto batch = std::make_unique<FakeCufile::State::Batch>();
  batch->capacity = nr;
  std::lock_guard lk(s.mu);
  *b = batch.get();
  s.batches[batch.get()] = std::move(batch);
  return ok();
}
CUfileError_t f_batch_submit(cufile::CUfileBatchHandle_t b, unsigned nr,
                             cufile::CUfileIOParams_t* params, unsigned) {
  auto& s = FakeCufile::current();
  s.call("BatchIOSubmit");
  FakeCufile::State::Batch* batch = nullptr;
  {
    std::lock_guard lk(s.mu);
    batch = s.batches.at(b).get();
    // kvikio's reading of the docs: one submission in flight per batch handle.
    if (batch->in_flight > 0 || nr > batch->capacity) return err(5037);
    batch->in_flight = nr;
  }
  for (unsigned i = 0; i < nr; ++i) {
    const auto& p = params[i];
    if (p.mode != cufile::kBatchMode) return err(5022);
    const long long r = s.io(p.fh, p.opcode == cufile::kOpRead,
                             static_cast<char*>(p.u.batch.devPtr_base) + p.u.batch.devPtr_offset,
                             p.u.batch.size, p.u.batch.file_offset);
    cufile::CUfileIOEvents_t ev;
    ev.cookie = p.cookie;
    ev.status = r >= 0 ? cufile::kStatusComplete : cufile::kStatusFailed;
    ev.ret = static_cast<std::size_t>(r);
    std::lock_guard lk(s.mu);
    batch->done.push_back(ev);
  }
  return ok();
}
CUfileError_t f_batch_status(cufile::CUfileBatchHandle_t b, unsigned min_nr, unsigned* nr,
                             cufile::CUfileIOEvents_t* events, timespec*) {
  auto& s = FakeCufile::current();
  s.call("BatchIOGetStatus");
  std::lock_guard lk(s.mu);
  auto& batch = *s.batches.at(b);
  if (batch.done.size() < min_nr) return err(5041);
  unsigned n = 0;
  while (n < *nr && !batch.done.empty()) {
    events[n++] = batch.done.front();
    batch.done.pop_front();
    --batch.in_flight;
  }
  *nr = n;
  return ok();
}
CUfileError_t f_batch_cancel(cufile::CUfileBatchHandle_t) {
  FakeCufile::current().call("BatchIOCancel");
  return ok();
}
void f_batch_destroy(cufile::CUfileBatchHandle_t b) {
  auto& s = FakeCufile::current();
  s.call("BatchIODestroy");
  std::lock_guard lk(s.mu);
  s.batches.erase(b);
}

}  // namespace

FakeCufile::State& FakeCufile::current() {
  if (g_current == nullptr) throw std::logic_error("no FakeCufile is current");
  return *g_current;
}

FakeCufile::FakeCufile(FakeGpuService& gpu, FakeCufileOptions options)
    : api_(std::make_shared<cufile::CufileApi>()), state_(std::make_unique<State>()) {
  state_->gpu = &gpu;
  state_->opt = std::move(options);
  g_current = state_.get();
  auto& a = *api_;
  a.library = "fake-libcufile";
  a.driver_open = f_driver_open;
  a.driver_close = f_driver_close;
  a.driver_get_properties = f_props;
  a.handle_register = f_handle_register;
  a.handle_deregister = f_handle_deregister;
  a.buf_register = f_buf_register;
  a.buf_deregister = f_buf_deregister;
  a.read = f_read;
  a.write = f_write;
  if (state_->opt.stream_api) {
    a.read_async = f_read_async;
    a.write_async = f_write_async;
    a.stream_register = f_stream_register;
    a.stream_deregister = f_stream_deregister;
  }
  if (state_->opt.batch_api) {
    a.batch_setup = f_batch_setup;
    a.batch_submit = f_batch_submit;
    a.batch_get_status = f_batch_status;
    a.batch_cancel = f_batch_cancel;
    a.batch_destroy = f_batch_destroy;
  }
}

FakeCufile::~FakeCufile() { g_current = nullptr; }

std::vector<std::string> FakeCufile::calls() const {
  std::lock_guard lk(state_->mu);
  return state_->calls;
}

std::vector<std::string> FakeCufile::call_sequence() const {
  std::vector<std::string> out;
  for (auto& c : calls()) {
    if (out.empty() || out.back() != c) out.push_back(c);
  }
  return out;
}

int FakeCufile::live_handles() const {
  std::lock_guard lk(state_->mu);
  return static_cast<int>(state_->handles.size());
}
int FakeCufile::live_buffers() const {
  std::lock_guard lk(state_->mu);
  return static_cast<int>(state_->buffers.size());
}
int FakeCufile::live_batches() const {
  std::lock_guard lk(state_->mu);
  return static_cast<int>(state_->batches.size());
}
int FakeCufile::live_streams() const {
  std::lock_guard lk(state_->mu);
  return static_cast<int>(state_->streams.size());
}
int FakeCufile::async_streams_used() const {
  std::lock_guard lk(state_->mu);
  return static_cast<int>(state_->async_streams.size());
}
unsigned FakeCufile::async_peak_running() const {
  std::lock_guard lk(state_->mu);
  return state_->async_peak;
}
bool FakeCufile::driver_open() const {
  std::lock_guard lk(state_->mu);
  return state_->open;
}
int FakeCufile::driver_opens() const {
  std::lock_guard lk(state_->mu);
  return state_->opens;
}
std::vector<std::string> FakeCufile::misuse() const {
  std::lock_guard lk(state_->mu);
  return state_->misuse;
}

}  // namespace gdsb::gpu::testing
