// The compiled parts of Boost.Asio and Boost.Beast, built once here rather than inline in every
// file that includes them (BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION
// are defined for the whole project in CMakeLists.txt): it shortens the build by a few seconds
// for each of the many files that use them.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
