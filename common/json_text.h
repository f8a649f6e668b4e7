// JSON text: writes a boost::json::value as JSON with its numbers as people and other programs
// write them. Every JSON answer of the daemon, and everything nbspamc prints from one, goes
// through it.
//
//   std::string text = WriteJson(json::object{{"probability", 0.9997}, {"alpha", 1.0}});
//   // {"probability":0.9997,"alpha":1}
//
// Boost.JSON 1.81's own serializer writes doubles in a scientific form of its own (0.9997 as
// "9.997E-1", 1.0 as "1E0") and non-finite doubles as "Infinity" and "NaN", which are not JSON.
// Here a double is the shortest decimal that reads back to the same double (std::to_chars
// without a precision): "0.9997", "1", "-0.0213", "123456789", "-0"; very small or large ones
// take an exponent ("1e-300", "1e+21"). A NaN or an infinity is written as null, so the text is
// always valid JSON. Integers are written exactly; strings are escaped as JSON requires (", \,
// and the control characters below 0x20); their bytes are otherwise copied (the caller keeps
// them UTF-8). Objects keep their insertion order; nothing adds white space.
//
// Thread-safe: pure functions.
#ifndef NBSPAMD_COMMON_JSON_TEXT_H_
#define NBSPAMD_COMMON_JSON_TEXT_H_

#include <boost/json/value.hpp>
#include <string>

namespace nbspamd {

// `value` as JSON text.
[[nodiscard]] std::string WriteJson(const boost::json::value& value);

// Appends `value` as JSON text to `out`.
void AppendJson(std::string& out, const boost::json::value& value);

// One double as WriteJson writes it: the shortest round-trip decimal, or "null" when it is not
// finite.
[[nodiscard]] std::string JsonNumber(double value);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_JSON_TEXT_H_
