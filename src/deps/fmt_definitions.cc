// The compiled part of fmt, for the executables linked with static dependencies
// (cmake/CordonDeps.cmake, decision 0024). Debian ships libfmt only as a shared library; its
// non-template functions are defined in <fmt/format-inl.h>, and the templates that
// <fmt/format.h> declares `extern` (or defines only there) are instantiated below, once.
// Built with the same fmt headers as every other translation unit.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
