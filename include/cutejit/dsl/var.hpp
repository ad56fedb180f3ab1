/** \file
 * Mutable traced variables. A `Var<T>` is a stack slot that LLVM promotes to a register (as
 * clang does for C locals), so it can be assigned inside `if_`/`for_`/`while_` and read after.
 * `RegisterArray<T, N>` is N of them, indexable by C++ ints (stays in registers) or by traced
 * ints (may go to local memory).
 */
#pragma once

#include "cutejit/dsl/value.hpp"

namespace cutejit {

namespace detail {
/// An lvalue in memory: reading loads, assigning stores. Shared by Var, register arrays and
/// tensor elements.
template <Element T>
class Ref : public Arithmetic<T> {
 public:
  explicit Ref(ValueId ptr) : ptr_(ptr) {}
  Value<T> read(Where w) const { return Value<T>(load(ptr_, dtype_v<T>, w)); }
  Value<T> get(Where w = Where::current()) const { return read(w); }
  const Ref& operator=(const Operand<T>& v) const {
    store(ptr_, v.id, v.where);
    return *this;
  }
  const Ref& operator=(const Ref& other) const { return *this = Operand<T>(other.read(Where::current())); }
  const Ref& operator+=(const Operand<T>& v) const { return *this = read(v.where) + v; }
  const Ref& operator-=(const Operand<T>& v) const { return *this = read(v.where) - v; }
  const Ref& operator*=(const Operand<T>& v) const { return *this = read(v.where) * v; }
  ValueId pointer() const { return ptr_; }

 private:
  ValueId ptr_;
};
}  // namespace detail

template <Element T>
class Var : public detail::Ref<T> {
 public:
  Var(const Operand<T>& init, detail::Where w = detail::Where::current())
      : detail::Ref<T>(detail::register_array(dtype_v<T>, 1, w)) {
    detail::store(this->pointer(), init.id, w);
  }
  Var(const Value<T>& init, detail::Where w = detail::Where::current()) : Var(Operand<T>(init, w), w) {}
  template <class U>
    requires(std::is_arithmetic_v<U> && std::is_convertible_v<U, T>)
  Var(U init, detail::Where w = detail::Where::current()) : Var(Operand<T>(init, w), w) {}
  Var(const Var& other, detail::Where w = detail::Where::current()) : Var(Operand<T>(other.read(w), w), w) {}
  using detail::Ref<T>::operator=;
  const Var& operator=(const Var& other) const { return assign(Operand<T>(other.read(detail::Where::current()))); }
  const Var& operator=(const Value<T>& v) const { return assign(Operand<T>(v)); }
  template <class U>
    requires(std::is_arithmetic_v<U> && std::is_convertible_v<U, T>)
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
  detail::Ref<T> operator[](int i) const {
    if (i < 0 || i >= N) detail::index_out_of_range(i, N, detail::Where::current());
    return at(Operand<int32_t>(i));
  }
  detail::Ref<T> operator[](const Int& i) const { return at(Operand<int32_t>(i)); }

 private:
  detail::Ref<T> at(const Operand<int32_t>& i) const {
    return detail::Ref<T>(detail::offset_pointer(base_, i.id, dtype_v<T>, i.where));
  }
  detail::ValueId base_;
};

}  // namespace cutejit
