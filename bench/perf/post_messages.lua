-- wrk script: POSTs mail messages in turn, each connection paced when asked, and prints the
-- result as one JSON line.
--   wrk ... -s post_messages.lua URL -- LIST_FILE PATH [DELAY_MS] [HEADER: VALUE]...
-- LIST_FILE names one message file per line. DELAY_MS (default 0) is the pause each connection
-- takes before each request: with C connections, about C / (DELAY_MS / 1000) requests per second.
-- In PATH, "{id}" becomes an id no other request of the run has, and "{label}" becomes "spam" when
-- the message's file name contains "spam", else "ham" (for /train).
local bodies, labels, target, pause, headers = {}, {}, "/", 0, {}
local next_body, sent, thread_name = 0, 0, ""

function init(args)
  for path in io.lines(args[1]) do
    local file = assert(io.open(path, "rb"))
    bodies[#bodies + 1] = file:read("a")
    labels[#bodies] = path:find("spam") and "spam" or "ham"
    file:close()
  end
  target = args[2]
  pause = tonumber(args[3] or "0")
  for i = 4, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  headers["Content-Type"] = headers["Content-Type"] or "message/rfc822"
  next_body = math.random(#bodies)
  thread_name = tostring(math.random(1, 2 ^ 31)) .. "-" .. tostring(os.time())
end

function request()
  next_body = next_body % #bodies + 1
  sent = sent + 1
  local path = target:gsub("{id}", thread_name .. "-" .. sent):gsub("{label}", labels[next_body])
  return wrk.format("POST", path, headers, bodies[next_body])
end

function delay()
  return pause
end

function done(summary, latency, _)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "socket_errors": %d, "status_errors": %d, ' ..
    '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "p999": %d, "max": %d}}\n',
    summary.requests, summary.duration,
    errors.connect + errors.read + errors.write + errors.timeout, errors.status,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max))
end
