-- The Redis scripting dialect on a stock Lua 5.1 (see scripting/mod.rs).
--
-- Runs once per Lua state, with `prim` (primitives written in Rust) as its
-- argument, and returns what Rust needs to run scripts: the environment every
-- script is bound to, the table where KEYS and ARGV go, the `redis` table (which
-- receives call and pcall for each run) and the `run` function that calls a
-- script under Redis's error handler.
--
-- Redis patches its Lua so that the globals table and every table reachable from
-- it are read-only. Stock Lua has no read-only tables, so scripts here see the
-- globals through `env`, an empty proxy whose metatable raises Redis's errors,
-- and every library table through a read-only proxy of its own.

local prim = ...
local dbg = debug
local real_error, real_pcall, real_setfenv = error, pcall, setfenv
local real_loadstring, real_load = loadstring, load
local real_rawset, real_setmetatable = rawset, setmetatable
local type, tostring, tonumber, select, pairs = type, tostring, tonumber, select, pairs
local floor = math.floor
local PRELUDE = '@redislab_prelude'

local READONLY = 'Attempt to modify a readonly table'

-- The functions below that Redis writes in C are wrapped by `prim.c_function`
-- (a Rust function, so a C function to Lua): a `return redis.log(...)` tail call
-- then keeps the script's frame, as it does on Redis. They raise through
-- `prim.raise` (an `{err=...}` table, as Redis's luaPushError + lua_error) or
-- `prim.raise_string` (a plain message, as luaL_error), never through `error`.
local raise, raise_string, c_function = prim.raise, prim.raise_string, prim.c_function

-- luaL_where(L, 1) seen from a wrapped function: `level` 1 is the function that
-- calls `where`, then the Rust wrapper, then the script.
local function where(level)
  local info = dbg.getinfo(level + 3, 'Sl')
  if info and info.currentline > 0 then
    return info.short_src .. ':' .. info.currentline .. ': '
  end
  return ''
end
local protected = real_setmetatable({}, { __mode = 'k' })

-- Raised at the assignment's line, as Lua's VM does for a read-only table.
local function readonly_error()
  real_error(READONLY, 2)
end

local function readonly(t)
  local proxy = real_setmetatable({}, { __index = t, __newindex = readonly_error, __metatable = false })
  protected[proxy] = true
  return proxy
end

-- ---------------------------------------------------------------------------
-- The `redis` table.

local redis = {}

-- redis.call, redis.pcall and redis.sha1hex are Rust functions (C functions to
-- Lua, as in Redis, so a `return redis.call(...)` tail call keeps the script's
-- frame for the error's line number). call and pcall are set for each run.
redis.sha1hex = prim.sha1hex

function redis.error_reply(...)
  local text = ...
  if select('#', ...) ~= 1 or type(text) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  if text:sub(1, 1) ~= '-' then
    text = '-' .. text
  end
  return { err = prim.error_text(text) }
end

function redis.status_reply(...)
  local text = ...
  if select('#', ...) ~= 1 or type(text) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  return { ok = text }
end

-- C's (int) cast of a Lua number, or nil when the value is not a number.
local function c_int(v)
  local n = tonumber(v)
  if n == nil or n ~= n then
    return nil
  end
  if n < 0 then
    return -floor(-n)
  end
  return floor(n)
end

redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3

-- Accepted and checked like Redis's; the core has no log file, so the line is
-- dropped.
function redis.log(...)
  local n = select('#', ...)
  if n < 2 then
    raise('ERR redis.log() requires two arguments or more.')
  end
  local level = c_int((...))
  if level == nil then
    raise('ERR First argument must be a number (log level).')
  end
  if level < 0 or level > 3 then
    raise('ERR Invalid log level.')
  end
end

function redis.setresp(...)
  if select('#', ...) ~= 1 then
    raise('ERR redis.setresp() requires one argument.')
  end
  local resp = c_int((...))
  if resp ~= 2 and resp ~= 3 then
    raise('ERR RESP version must be 2 or 3.')
  end
  if resp == 3 then
    raise('ERR RESP3 inside scripts is not modelled by the core')
  end
end

redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3

-- The core does not replicate; the argument is checked like Redis checks it.
function redis.set_repl(...)
  if select('#', ...) ~= 1 then
    raise('ERR redis.set_repl() requires one argument.')
  end
  local flags = c_int((...)) or 0
  if flags < 0 or flags > 3 then
    raise('ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.')
  end
end

function redis.replicate_commands()
  return true
end

function redis.breakpoint()
  return false
end

function redis.debug() end

for _, name in ipairs({
  'error_reply', 'status_reply', 'log', 'setresp', 'set_repl', 'replicate_commands',
  'breakpoint', 'debug',
}) do
  redis[name] = c_function(redis[name])
end

redis.REDIS_VERSION = prim.version
redis.REDIS_VERSION_NUM = prim.version_num

-- ---------------------------------------------------------------------------
-- math.random on Redis's own rand48, so the same calls draw the same numbers.

-- The name luaL_argerror gives the wrapped function: how its caller called it
-- (`random` for math.random(...)), or `?` when a C function such as pcall did.
local function fname(level)
  local info = dbg.getinfo(level + 2, 'n')
  return info and info.name or '?'
end

local function argerror(level, i, msg)
  raise_string(where(level + 1) .. 'bad argument #' .. i .. " to '" .. fname(level + 1) .. "' (" .. msg .. ')')
end

-- luaL_checkint, called directly by a wrapped function.
local function int_arg(v, i)
  local n = c_int(v)
  if n == nil then
    local got = v == nil and 'no value' or type(v)
    argerror(2, i, 'number expected, got ' .. got)
  end
  return n
end

local lmath = {}
for k, v in pairs(math) do
  lmath[k] = v
end

function lmath.random(...)
  local r = (prim.lrand48() % 2147483647) / 2147483647
  local n = select('#', ...)
  if n == 0 then
    return r
  elseif n == 1 then
    local u = int_arg((...), 1)
    if u < 1 then
      argerror(1, 1, 'interval is empty')
    end
    return floor(r * u) + 1
  elseif n == 2 then
    local l, u = ...
    l, u = int_arg(l, 1), int_arg(u, 2)
    if l > u then
      argerror(1, 2, 'interval is empty')
    end
    return floor(r * (u - l + 1)) + l
  end
  raise_string(where(1) .. 'wrong number of arguments')
end

function lmath.randomseed(seed)
  prim.srand48(int_arg(seed, 1))
end
lmath.random = c_function(lmath.random)
lmath.randomseed = c_function(lmath.randomseed)

-- ---------------------------------------------------------------------------
-- The globals a script sees.

local visible = {}
local env = real_setmetatable({}, {
  __index = function(_, name)
    local v = visible[name]
    if v == nil then
      real_error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
    end
    return v
  end,
  __newindex = readonly_error,
  __metatable = false,
})
protected[env] = true

local function bind(f)
  real_setfenv(f, env)
  return f
end

-- Redis's pcall hands back the message of an error table, not the table.
local function pcall_result(ok, ...)
  if ok then
    return true, ...
  end
  local e = ...
  if type(e) == 'userdata' then
    e = prim.error_value(e)
  end
  if type(e) == 'table' then
    local msg = e.err
    if type(msg) == 'string' or type(msg) == 'number' then
      e = msg
    end
  end
  return false, e
end

for _, name in ipairs({
  'assert', 'collectgarbage', 'error', 'gcinfo', 'getmetatable', 'ipairs', 'next',
  'pairs', 'rawequal', 'rawget', 'select', 'tonumber', 'tostring', 'type',
  'unpack', 'xpcall', '_VERSION',
}) do
  visible[name] = _G[name]
end
visible._G = env
visible.pcall = function(...)
  return pcall_result(real_pcall(...))
end
visible.loadstring = function(s, name)
  local f, e = real_loadstring(s, name)
  if f then
    bind(f)
  end
  return f, e
end
visible.load = function(fn, name)
  local f, e = real_load(fn, name)
  if f then
    bind(f)
  end
  return f, e
end
-- Redis's VM refuses these on a read-only table with a message and no position.
visible.rawset = c_function(function(t, k, v)
  if protected[t] then
    raise_string(READONLY)
  end
  if type(t) ~= 'table' then
    argerror(1, 1, 'table expected, got ' .. type(t))
  end
  return real_rawset(t, k, v)
end)
visible.setmetatable = c_function(function(t, mt)
  if protected[t] then
    raise_string(READONLY)
  end
  if type(t) ~= 'table' then
    argerror(1, 1, 'table expected, got ' .. type(t))
  end
  return real_setmetatable(t, mt)
end)
visible.string = readonly(string)
visible.table = readonly(table)
visible.math = readonly(lmath)
visible.coroutine = readonly(coroutine)
visible.os = readonly({ clock = os.clock })
visible.redis = readonly(redis)

-- `("x"):rep(2)` goes through the string metatable: hand out a read-only view.
local string_mt = getmetatable('')
string_mt.__metatable = readonly({ __index = visible.string })

-- ---------------------------------------------------------------------------
-- Running a script.

-- Redis's __redis__err__handler: make every error a table {err=...} and note
-- where in the user's script it happened, skipping C functions (as Redis skips
-- the C function that raised) and this prelude's own Lua wrappers (which are C
-- functions in Redis).
local function handler(err)
  local level = 2
  local info = dbg.getinfo(level, 'nSl')
  while info and (info.what == 'C' or info.source == PRELUDE) do
    level = level + 1
    info = dbg.getinfo(level, 'nSl')
  end
  if type(err) == 'userdata' then
    err = prim.error_value(err)
  end
  if type(err) ~= 'table' then
    err = { err = 'ERR ' .. tostring(err) }
  end
  if info then
    err['source'] = info.source
    err['line'] = info.currentline
  end
  return err
end

local function run(f)
  return xpcall(f, handler)
end

return { env = env, visible = visible, redis = redis, bind = bind, run = run }
