// The CPU flexible-wavefront driver (seed 004's flexible allocation) that generated C++ calls for a
// 2D uniform recurrence: workers take columns dynamically under per-column locks and progress
// counters instead of being pinned to columns. Header-only; C++17; OpenMP when compiled with it
// (unless POLYC_WAVEFRONT_STD_THREAD is defined), std::thread otherwise.
//
// Dependences it serves (quarter-plane): point (row, column) may read any point (row', column')
// with row' <= row and column' <= column other than itself, i.e. earlier rows of the same column
// and rows <= row of earlier columns.
//
// A worker walks down one column, row after row, so the body's `row` should be the array's
// contiguous (last) index: for y[i, j] in C order, call body(row = j, column = i). The quarter-plane
// is symmetric in its two indices, so this is always legal for it; measured on 1024 x 1024 with a
// 5 x 5 window, one worker then runs as fast as the plain loop nest, and twice as slow with the
// other mapping (strided accesses).
//
// The protocol, per column c: done[c] counts the rows of column c that are finished (rows are
// computed in order), lock[c] is 1 while a worker owns the column. Row r of column c is *ready*
// when done[c] == r and (c == 0 or done[c-1] > r) (seed 004, condition 7). A worker scans the
// columns from the lowest unfinished one and takes the first that is ready and unlocked (the argmin
// of condition 10) with a compare-exchange; it computes rows of that column while the left
// neighbour is ahead, publishing each row with done[c].store(release); then it releases the lock
// with store(0, release) and scans again. Readers load done[] with acquire, so every y value a point
// reads was written before a release the reader has synchronised with (transitively through the
// chain of columns to the left, and through the lock for earlier rows of the same column).
//
// Why it cannot deadlock, for any number of workers (1, more than columns, ...):
//  - No worker ever waits while holding a lock: the inner loop only computes rows whose inputs are
//    finished, and when the left neighbour is not ahead it releases the lock at once. The body runs
//    a bounded computation and never blocks.
//  - While some column is unfinished, the lowest unfinished column f is ready (f == 0, or column
//    f-1 is finished, so done[f-1] = rows > done[f]). Either a worker holds its lock and is making
//    progress on it, or it is unlocked and the next scan of any worker takes it (the scan reaches f
//    first because it starts at the count of finished columns, which never exceeds f).
//  - So some worker always makes progress (assuming the OS eventually runs every thread); idle
//    workers only spin, yield and rescan, holding nothing. Unlike a GPU kernel that pins blocks to
//    columns, nothing depends on which workers happen to be running.
// All workers return when every column is finished. An exception thrown by the body stops all
// workers and is rethrown in the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(_OPENMP) && !defined(POLYC_WAVEFRONT_STD_THREAD)
#define POLYC_WAVEFRONT_OPENMP 1
#include <omp.h>
#endif

namespace polyc::rt::cpu {

namespace detail {

// One column's progress counter and lock, on their own cache line so that workers on neighbouring
// columns do not invalidate each other's lines on every row.
struct alignas(64) WavefrontColumn {
  std::atomic<int64_t> done{0};
  std::atomic<int> lock{0};
};

struct WavefrontState {
  WavefrontState(int64_t rows, int64_t columns)
      : rows(rows), columns(columns), column(new WavefrontColumn[size_t(columns)]) {}
  int64_t rows;
  int64_t columns;
  std::unique_ptr<WavefrontColumn[]> column;
  // Counts finished columns. Columns finish in index order (column c's last row needs column c-1
  // finished), so the first `finished` columns are always finished and a scan may start there.
  std::atomic<int64_t> finished{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::exception_ptr error;
};

inline void wavefrontPause(int idleRounds) {
  if (idleRounds < 16) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return;
  }
  std::this_thread::yield();
}

// Takes the lowest ready, unlocked column, computes its rows while the left neighbour is ahead,
// and releases it. Returns whether any row was computed.
template <class Body> bool wavefrontStep(WavefrontState &state, Body &body) {
  const int64_t rows = state.rows;
  for (int64_t c = state.finished.load(std::memory_order_acquire); c < state.columns; ++c) {
    WavefrontColumn &here = state.column[size_t(c)];
    int64_t row = here.done.load(std::memory_order_acquire);
    if (row == rows)
      continue;
    int64_t leftDone = c == 0 ? rows : state.column[size_t(c - 1)].done.load(std::memory_order_acquire);
    if (leftDone <= row) {
      // done[] never increases from left to right, so a column with nothing done that is not
      // ready means no column to its right is ready either.
      if (row == 0)
        break;
      continue;
    }
    if (here.lock.load(std::memory_order_relaxed) != 0)
      continue;
    int unlocked = 0;
    if (!here.lock.compare_exchange_strong(unlocked, 1, std::memory_order_acquire,
                                           std::memory_order_relaxed))
      continue;
    // Under the lock done[c] only changes by our hand; the previous owner's stores are visible
    // through the lock's acquire.
    row = here.done.load(std::memory_order_acquire);
    bool progressed = false;
    while (row < rows) {
      if (c > 0 && state.column[size_t(c - 1)].done.load(std::memory_order_acquire) <= row)
        break;
      body(row, c);
      ++row;
      here.done.store(row, std::memory_order_release);
      progressed = true;
    }
    if (row == rows && progressed)
      state.finished.fetch_add(1, std::memory_order_acq_rel);
    here.lock.store(0, std::memory_order_release);
    if (progressed)
      return true;
  }
  return false;
}

template <class Body> void wavefrontWorker(WavefrontState &state, Body &body) {
  try {
    int idleRounds = 0;
    while (!state.failed.load(std::memory_order_acquire) &&
           state.finished.load(std::memory_order_acquire) < state.columns) {
      if (wavefrontStep(state, body)) {
        idleRounds = 0;
      } else {
        wavefrontPause(idleRounds);
        ++idleRounds;
      }
    }
  } catch (...) {
    std::lock_guard<std::mutex> guard(state.errorMutex);
    if (!state.error)
      state.error = std::current_exception();
    state.failed.store(true, std::memory_order_release);
  }
}

inline int defaultWavefrontThreads() {
#ifdef POLYC_WAVEFRONT_OPENMP
  return omp_get_max_threads();
#else
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : int(hardware);
#endif
}

} // namespace detail

// Computes every point (row, column) of a rows x columns grid with body(row, column), each point
// after the points it depends on (see above), on `threads` workers (<= 0: OpenMP's default, or the
// hardware's thread count). More workers than columns would only spin, so at most `columns` are
// started. Exceptions thrown by `body` are rethrown here after all workers stopped.
template <class Body>
void runFlexibleWavefront(int64_t rows, int64_t columns, int threads, Body &&body) {
  if (rows <= 0 || columns <= 0)
    return;
  if (threads <= 0)
    threads = detail::defaultWavefrontThreads();
  int workers = int(std::min<int64_t>(threads, columns));
  detail::WavefrontState state(rows, columns);
  if (workers == 1) {
    detail::wavefrontWorker(state, body);
  } else {
#ifdef POLYC_WAVEFRONT_OPENMP
#pragma omp parallel num_threads(workers)
    detail::wavefrontWorker(state, body);
#else
    std::vector<std::thread> helpers;
    helpers.reserve(size_t(workers - 1));
    try {
      for (int t = 1; t < workers; ++t)
        helpers.emplace_back([&state, &body] { detail::wavefrontWorker(state, body); });
    } catch (...) {
      // Could not start every thread: the protocol works with any number of workers, so the
      // ones that started and this thread finish the grid.
    }
    detail::wavefrontWorker(state, body);
    for (std::thread &helper : helpers)
      helper.join();
#endif
  }
  if (state.error)
    std::rethrow_exception(state.error);
}

} // namespace polyc::rt::cpu
