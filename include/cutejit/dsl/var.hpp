/** \file
 * Mutable traced variables. A `Var<T>` is a stack slot that LLVM promotes to a register (as
 * clang does for C locals), so it can be assigned inside `if_`/`for_`/`while_` and read after.
 * `RegisterArray<T, N>` is N of them, indexable by C++ ints (stays in registers) or by traced
 * ints (may go to local memory).
 *
 * A read from memory knows nothing of what was stored: an integer Var read inside a loop may
 * hold any value assigned anywhere in the loop, later assignments included, so the tracer
 * cannot carry the divisibility of its initial value and step on its own. Say it instead:
 * `Var<int32_t> k(k0, divisible_by(16))` promises that k is always a multiple of 16; every
 * assignment is checked against the promise at trace time (an error names the assignment when
 * the tracer cannot prove it), and every read knows it, so tiles at k are provably aligned.
 * `assume_divisible(v, 16)` vouches for one value the tracer cannot prove.
 */
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

namespace detail {
/// An lvalue in memory: reading loads, assigning stores. Shared by Var, register arrays and
/// tensor elements.
template <Element T>
class Ref : public Arithmetic<T> {
 public:
  explicit Ref(ValueId ptr) : ptr_(ptr) {}
  Value<T> read(Where w) const {
    ValueId v = load(ptr_, dtype_v<T>, w);
    return Value<T>(divisor_ > 1 ? assume_divisible(v, divisor_, w) : v);
  }
  Value<T> get(Where w = Where::current()) const { return read(w); }
  const Ref& operator=(const Operand<T>& v) const {
    if (divisor_ > 1 && known_divisor(v.id) % divisor_ != 0) broken_promise(v);
    store(ptr_, v.id, v.where);
    return *this;
  }
  const Ref& operator=(const Ref& other) const { return *this = Operand<T>(other.read(Where::current())); }
  // The sum is stored from the user's line, so that a broken promise names it.
  const Ref& operator+=(const Operand<T>& v) const { return *this = Operand<T>(read(v.where) + v, v.where); }
  const Ref& operator-=(const Operand<T>& v) const { return *this = Operand<T>(read(v.where) - v, v.where); }
  const Ref& operator*=(const Operand<T>& v) const { return *this = Operand<T>(read(v.where) * v, v.where); }
  template <OtherElement<T> R>
  const Ref& operator=(const R&) const {
    static_assert(always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
    return *this;
  }
  template <OtherElement<T> R>
  const Ref& operator+=(const R&) const {
    static_assert(always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
    return *this;
  }
  template <OtherElement<T> R>
  const Ref& operator-=(const R&) const {
    static_assert(always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
    return *this;
  }
  template <OtherElement<T> R>
  const Ref& operator*=(const R&) const {
    static_assert(always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
    return *this;
  }
  ValueId pointer() const { return ptr_; }

 protected:
  /// Makes every value this lvalue holds a promised multiple of `divisor` (Var's divisible_by).
  void promise_divisible(int64_t divisor, Where declared) {
    if (divisor <= 0 || (divisor & (divisor - 1)) != 0 || divisor > (int64_t(1) << 30))
      fail("divisible_by needs a power of two between 1 and 2^30, not " + std::to_string(divisor), declared);
    divisor_ = divisor;
    declared_ = declared;
  }

 private:
  [[noreturn]] void broken_promise(const Operand<T>& v) const {
    fail("this value is not known to be a multiple of " + std::to_string(divisor_) + " (the tracer proves " +
             std::to_string(known_divisor(v.id)) + "), which the Var declared at " + declared_.file_name() + ":" +
             std::to_string(declared_.line()) + " promises (divisible_by(" + std::to_string(divisor_) +
             ")); assign a provable multiple, or vouch for this one with assume_divisible(value, " + std::to_string(divisor_) + ")",
         v.where);
  }
  ValueId ptr_;
  int64_t divisor_ = 1;
  Where declared_{};
};
}  // namespace detail

/// A Var's promise: every value it holds is a multiple of `divisor` (a power of two).
struct DivisibleBy {
  int64_t divisor;
};
constexpr DivisibleBy divisible_by(int64_t divisor) { return {divisor}; }

template <Element T>
class Var : public detail::Ref<T> {
 public:
  Var(const Operand<T>& init, detail::Where w = detail::Where::current())
      : detail::Ref<T>(detail::register_array(dtype_v<T>, 1, w)) {
    detail::store(this->pointer(), init.id, w);
  }
  Var(const Value<T>& init, detail::Where w = detail::Where::current()) : Var(Operand<T>(init, w), w) {}
  Var(const detail::Ref<T>& init, detail::Where w = detail::Where::current()) : Var(Operand<T>(init.read(w), w), w) {}
  /// An integer Var whose every value is a multiple of `d.divisor`: checked at each
  /// assignment (this one included), known at each read.
  Var(const Operand<T>& init, DivisibleBy d, detail::Where w = detail::Where::current())
    requires std::is_integral_v<T>
      : detail::Ref<T>(detail::register_array(dtype_v<T>, 1, w)) {
    this->promise_divisible(d.divisor, w);
    detail::Ref<T>::operator=(init);
  }
  template <ConstantOf<T> U>
  Var(U init, detail::Where w = detail::Where::current()) : Var(Operand<T>(init, w), w) {}
  template <detail::OtherElement<T> R>
  Var(const R&, detail::Where = detail::Where::current()) : detail::Ref<T>(detail::ValueId{}) {
    static_assert(detail::always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
  }
  Var(const Var& other, detail::Where w = detail::Where::current()) : Var(Operand<T>(other.read(w), w), w) {}
  using detail::Ref<T>::operator=;
  const Var& operator=(const Var& other) const { return assign(Operand<T>(other.read(detail::Where::current()))); }
  const Var& operator=(const Value<T>& v) const { return assign(Operand<T>(v)); }
  template <ConstantOf<T> U>
  const Var& operator=(U v) const {
    return assign(Operand<T>(v));
  }

 private:
  const Var& assign(const Operand<T>& v) const {
    detail::Ref<T>::operator=(v);
    return *this;
  }
};

template <Element T, int N>
class RegisterArray {
 public:
  explicit RegisterArray(detail::Where w = detail::Where::current())
      : base_(detail::register_array(dtype_v<T>, N, w)) {}
  RegisterArray(const Operand<T>& fill, detail::Where w = detail::Where::current()) : RegisterArray(w) {
    for (int i = 0; i < N; ++i) (*this)[i] = fill;
  }
  static constexpr int size() { return N; }
  /// A C++ index, with the user's line (operator[] takes one argument, so the index carries it).
  struct Index {
    template <std::integral I>
      requires(!std::same_as<I, bool>)
    Index(I i, detail::Where w = detail::Where::current()) : value(std::in_range<int64_t>(i) ? int64_t(i) : INT64_MAX), where(w) {}
    int64_t value;
    detail::Where where;
  };
  detail::Ref<T> operator[](Index i) const {
    if (i.value < 0 || i.value >= N) detail::index_out_of_range(i.value, N, i.where);
    return at(Operand<int32_t>(int32_t(i.value), i.where));
  }
  /// A traced index (an Int, or a Var<int32_t>), which may send the array to local memory.
  template <detail::Traced I>
    requires std::same_as<detail::traced_element_t<I>, int32_t>
  detail::Ref<T> operator[](const I& i) const {
    return at(Operand<int32_t>(i));
  }

 private:
  detail::Ref<T> at(const Operand<int32_t>& i) const {
    return detail::Ref<T>(detail::offset_pointer(base_, i.id, dtype_v<T>, i.where));
  }
  detail::ValueId base_;
};

}  // namespace cutejit
