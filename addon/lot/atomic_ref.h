#pragma once
// parklock::atomic_ref: std::atomic_ref where the standard library has it, otherwise a minimal
// stand-in for the operations parklock uses. libc++ before version 19 (clang 14 to 18 with
// -stdlib=libc++) has no std::atomic_ref; the stand-in uses the __atomic builtins that both GCC
// and Clang provide, which is what the standard class does on those compilers.

#include <atomic>
#include <version>

namespace parklock {

#if defined(__cpp_lib_atomic_ref)

template <typename T>
using atomic_ref = std::atomic_ref<T>;

#else

namespace detail {
// The __atomic builtins take the memory order as the plain __ATOMIC_* integer constants.
constexpr int builtin_order(std::memory_order order) noexcept {
  switch (order) {
    case std::memory_order_relaxed:
      return __ATOMIC_RELAXED;
    case std::memory_order_consume:
      return __ATOMIC_CONSUME;
    case std::memory_order_acquire:
      return __ATOMIC_ACQUIRE;
    case std::memory_order_release:
      return __ATOMIC_RELEASE;
    case std::memory_order_acq_rel:
      return __ATOMIC_ACQ_REL;
    default:
      return __ATOMIC_SEQ_CST;
  }
}

// The failure order of a compare-exchange given one order, as the standard derives it.
constexpr std::memory_order failure_order(std::memory_order order) noexcept {
  if (order == std::memory_order_acq_rel) return std::memory_order_acquire;
  if (order == std::memory_order_release) return std::memory_order_relaxed;
  return order;
}
}  // namespace detail

template <typename T>
class atomic_ref {
 public:
  using value_type = T;

  explicit atomic_ref(T& object) noexcept : ptr_(&object) {}

  T load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_load_n(ptr_, detail::builtin_order(order));
  }
  void store(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    __atomic_store_n(ptr_, value, detail::builtin_order(order));
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_exchange_n(ptr_, value, detail::builtin_order(order));
  }

  // Both take one order, or a success and a failure order, as std::atomic_ref's do. A weak
  // compare-exchange may fail spuriously (it belongs in a loop); a strong one fails only when the
  // value differs from `expected`.
  template <typename... Orders>
  bool compare_exchange_weak(T& expected, T desired, Orders... orders) const noexcept {
    return compare_exchange(expected, desired, /*weak=*/true, orders...);
  }
  template <typename... Orders>
  bool compare_exchange_strong(T& expected, T desired, Orders... orders) const noexcept {
    return compare_exchange(expected, desired, /*weak=*/false, orders...);
  }

  T fetch_add(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_fetch_add(ptr_, value, detail::builtin_order(order));
  }
  T fetch_sub(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_fetch_sub(ptr_, value, detail::builtin_order(order));
  }
  T fetch_and(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_fetch_and(ptr_, value, detail::builtin_order(order));
  }
  T fetch_or(T value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return __atomic_fetch_or(ptr_, value, detail::builtin_order(order));
  }

 private:
  bool compare_exchange(T& expected, T desired, bool weak, std::memory_order success,
                        std::memory_order failure) const noexcept {
    return __atomic_compare_exchange_n(ptr_, &expected, desired, weak,
                                       detail::builtin_order(success),
                                       detail::builtin_order(failure));
  }
  bool compare_exchange(T& expected, T desired, bool weak,
                        std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return compare_exchange(expected, desired, weak, order, detail::failure_order(order));
  }

  T* ptr_;
};

#endif

}  // namespace parklock
