/* Unit tests for rsp_monitor.c: parsing what a store reports about itself
 * (Redis INFO; memcached stats and stats settings as the memcache backend's
 * info() returns them) and comparing one poll with the previous one to
 * decide the alarms of DESIGN.md invariant 6 (the Monitoring section and
 * issue 4): policy, eviction, loss, refusals, headroom, reachability, role,
 * each with its blast radius in the text.
 *
 * The fixtures below are real output, captured from Debian's
 * /usr/bin/redis-server 7.0.15 and /usr/bin/memcached 1.6.18 on 127.0.0.1
 * (port 17379 for Redis, 17211/17212 for memcached), each state produced
 * the way its comment says, one state after the other in one server's
 * life unless a comment says otherwise.
 *
 * Redis: `redis-cli -p 17379 info`, byte for byte (CRLF line ends, as the
 * INFO bulk reply carries them). R_DEFAULT is kept whole; the others keep
 * the whole sections the monitor reads (Server, Memory, Stats, Replication,
 * Errorstats) and drop Clients, Persistence, CPU, Modules, Cluster and
 * Keyspace.
 *
 * memcached: `stats` and `stats settings` sent over a socket, whole, turned
 * into what mc_info() in rsp_store_memcache.c returns: a line
 * "server 127.0.0.1:11211" (the name the backend would give it) before each
 * server's block, and each "STAT x y" line as "x y\n"; the END line is not
 * part of it. MC_HALF and MC_SET_HALF are the backend's own output, real
 * port names and all.
 */
#include <stdlib.h>
#include <string.h>

#include "rsp_unit.h"
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "rsp_log.h"
#include "rsp_monitor.h"
#include "rsp_util.h"

/* ------------------------------------------------------------------ */
/* Fixtures: Redis INFO                                                */

/* default configuration: noeviction, maxmemory 0 (all sections) */
static const char R_DEFAULT[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571595094\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Clients\r\n"
    "connected_clients:1\r\n"
    "cluster_connections:0\r\n"
    "maxclients:10000\r\n"
    "client_recent_max_input_buffer:0\r\n"
    "client_recent_max_output_buffer:0\r\n"
    "blocked_clients:0\r\n"
    "tracking_clients:0\r\n"
    "clients_in_timeout_table:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:941584\r\n"
    "used_memory_human:919.52K\r\n"
    "used_memory_rss:12349440\r\n"
    "used_memory_rss_human:11.78M\r\n"
    "used_memory_peak:941584\r\n"
    "used_memory_peak_human:919.52K\r\n"
    "used_memory_peak_perc:100.26%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:65256\r\n"
    "used_memory_dataset_perc:99.69%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:0\r\n"
    "maxmemory_human:0B\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.71\r\n"
    "rss_overhead_bytes:7798784\r\n"
    "mem_fragmentation_ratio:13.71\r\n"
    "mem_fragmentation_bytes:11448456\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Persistence\r\n"
    "loading:0\r\n"
    "async_loading:0\r\n"
    "current_cow_peak:0\r\n"
    "current_cow_size:0\r\n"
    "current_cow_size_age:0\r\n"
    "current_fork_perc:0.00\r\n"
    "current_save_keys_processed:0\r\n"
    "current_save_keys_total:0\r\n"
    "rdb_changes_since_last_save:0\r\n"
    "rdb_bgsave_in_progress:0\r\n"
    "rdb_last_save_time:1796033569\r\n"
    "rdb_last_bgsave_status:ok\r\n"
    "rdb_last_bgsave_time_sec:-1\r\n"
    "rdb_current_bgsave_time_sec:-1\r\n"
    "rdb_saves:0\r\n"
    "rdb_last_cow_size:0\r\n"
    "rdb_last_load_keys_expired:0\r\n"
    "rdb_last_load_keys_loaded:0\r\n"
    "aof_enabled:0\r\n"
    "aof_rewrite_in_progress:0\r\n"
    "aof_rewrite_scheduled:0\r\n"
    "aof_last_rewrite_time_sec:-1\r\n"
    "aof_current_rewrite_time_sec:-1\r\n"
    "aof_last_bgrewrite_status:ok\r\n"
    "aof_rewrites:0\r\n"
    "aof_rewrites_consecutive_failures:0\r\n"
    "aof_last_write_status:ok\r\n"
    "aof_last_cow_size:0\r\n"
    "module_fork_in_progress:0\r\n"
    "module_fork_last_cow_size:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:2\r\n"
    "total_commands_processed:1\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:28\r\n"
    "total_net_output_bytes:7\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:3\r\n"
    "total_writes_processed:1\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# CPU\r\n"
    "used_cpu_sys:0.004260\r\n"
    "used_cpu_user:0.012782\r\n"
    "used_cpu_sys_children:0.000000\r\n"
    "used_cpu_user_children:0.000000\r\n"
    "used_cpu_sys_main_thread:0.004229\r\n"
    "used_cpu_user_main_thread:0.012689\r\n"
    "\r\n"
    "# Modules\r\n"
    "\r\n"
    "# Errorstats\r\n"
    "\r\n"
    "# Cluster\r\n"
    "cluster_enabled:0\r\n"
    "\r\n"
    "# Keyspace\r\n";

/* CONFIG SET maxmemory 10mb */
static const char R_LIMIT[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571609662\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:990960\r\n"
    "used_memory_human:967.73K\r\n"
    "used_memory_rss:12349440\r\n"
    "used_memory_rss_human:11.78M\r\n"
    "used_memory_peak:990960\r\n"
    "used_memory_peak_human:967.73K\r\n"
    "used_memory_peak_perc:100.16%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:114632\r\n"
    "used_memory_dataset_perc:99.83%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.71\r\n"
    "rss_overhead_bytes:7798784\r\n"
    "mem_fragmentation_ratio:13.71\r\n"
    "mem_fragmentation_bytes:11448456\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:4\r\n"
    "total_commands_processed:3\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:92\r\n"
    "total_net_output_bytes:4896\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:7\r\n"
    "total_writes_processed:3\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then CONFIG SET maxmemory-policy allkeys-lru */
static const char R_ALLKEYS[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571624733\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:990928\r\n"
    "used_memory_human:967.70K\r\n"
    "used_memory_rss:12349440\r\n"
    "used_memory_rss_human:11.78M\r\n"
    "used_memory_peak:990960\r\n"
    "used_memory_peak_human:967.73K\r\n"
    "used_memory_peak_perc:100.00%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:114600\r\n"
    "used_memory_dataset_perc:99.83%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:allkeys-lru\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.71\r\n"
    "rss_overhead_bytes:7798784\r\n"
    "mem_fragmentation_ratio:13.71\r\n"
    "mem_fragmentation_bytes:11448456\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:6\r\n"
    "total_commands_processed:5\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:172\r\n"
    "total_net_output_bytes:9800\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:11\r\n"
    "total_writes_processed:5\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then CONFIG SET maxmemory-policy volatile-lru */
static const char R_VOLATILE[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571638663\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:990928\r\n"
    "used_memory_human:967.70K\r\n"
    "used_memory_rss:12349440\r\n"
    "used_memory_rss_human:11.78M\r\n"
    "used_memory_peak:990960\r\n"
    "used_memory_peak_human:967.73K\r\n"
    "used_memory_peak_perc:100.00%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:114600\r\n"
    "used_memory_dataset_perc:99.83%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:volatile-lru\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.71\r\n"
    "rss_overhead_bytes:7798784\r\n"
    "mem_fragmentation_ratio:13.71\r\n"
    "mem_fragmentation_bytes:11448456\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:8\r\n"
    "total_commands_processed:7\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:253\r\n"
    "total_net_output_bytes:14707\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:15\r\n"
    "total_writes_processed:7\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* allkeys-lru, maxmemory just above used_memory, 2000 SETs of 1000 bytes:
 * evicted_keys > 0 */
static const char R_EVICTED[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571849026\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1190464\r\n"
    "used_memory_human:1.14M\r\n"
    "used_memory_rss:12349440\r\n"
    "used_memory_rss_human:11.78M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:100.14%\r\n"
    "used_memory_overhead:884776\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:305688\r\n"
    "used_memory_dataset_perc:97.25%\r\n"
    "allocator_allocated:1836256\r\n"
    "allocator_active:1998848\r\n"
    "allocator_resident:4669440\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:1189320\r\n"
    "maxmemory_human:1.13M\r\n"
    "maxmemory_policy:allkeys-lru\r\n"
    "allocator_frag_ratio:1.09\r\n"
    "allocator_frag_bytes:162592\r\n"
    "allocator_rss_ratio:2.34\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.64\r\n"
    "rss_overhead_bytes:7680000\r\n"
    "mem_fragmentation_ratio:12.99\r\n"
    "mem_fragmentation_bytes:11398424\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:13\r\n"
    "total_commands_processed:2011\r\n"
    "instantaneous_ops_per_sec:6\r\n"
    "total_net_input_bytes:2065302\r\n"
    "total_net_output_bytes:31038\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.23\r\n"
    "instantaneous_output_kbps:12.84\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:1840\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:134\r\n"
    "total_writes_processed:121\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* FLUSHALL, noeviction, maxmemory = used_memory + 100000 */
static const char R_OOM_BEFORE[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033571898144\r\n"
    "uptime_in_seconds:2\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871459\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1040304\r\n"
    "used_memory_human:1015.92K\r\n"
    "used_memory_rss:12611584\r\n"
    "used_memory_rss_human:12.03M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:87.39%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:163976\r\n"
    "used_memory_dataset_perc:99.88%\r\n"
    "allocator_allocated:1534496\r\n"
    "allocator_active:1888256\r\n"
    "allocator_resident:4562944\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:1138696\r\n"
    "maxmemory_human:1.09M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.23\r\n"
    "allocator_frag_bytes:353760\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2674688\r\n"
    "rss_overhead_ratio:2.76\r\n"
    "rss_overhead_bytes:8048640\r\n"
    "mem_fragmentation_ratio:12.61\r\n"
    "mem_fragmentation_bytes:11611192\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:18\r\n"
    "total_commands_processed:2016\r\n"
    "instantaneous_ops_per_sec:1234\r\n"
    "total_net_input_bytes:2065478\r\n"
    "total_net_output_bytes:37419\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:1235.94\r\n"
    "instantaneous_output_kbps:22.64\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:1840\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:144\r\n"
    "total_writes_processed:126\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then 300 SETs of 1000 bytes: OOM refusals (errorstat_OOM) */
static const char R_OOM[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033575107440\r\n"
    "uptime_in_seconds:6\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871463\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1139640\r\n"
    "used_memory_human:1.09M\r\n"
    "used_memory_rss:12611584\r\n"
    "used_memory_rss_human:12.03M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:95.73%\r\n"
    "used_memory_overhead:880992\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:258648\r\n"
    "used_memory_dataset_perc:98.15%\r\n"
    "allocator_allocated:1567080\r\n"
    "allocator_active:1904640\r\n"
    "allocator_resident:4595712\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:1138696\r\n"
    "maxmemory_human:1.09M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.22\r\n"
    "allocator_frag_bytes:337560\r\n"
    "allocator_rss_ratio:2.41\r\n"
    "allocator_rss_bytes:2691072\r\n"
    "rss_overhead_ratio:2.74\r\n"
    "rss_overhead_bytes:8015872\r\n"
    "mem_fragmentation_ratio:11.47\r\n"
    "mem_fragmentation_bytes:11511856\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:319\r\n"
    "total_commands_processed:2108\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:2374984\r\n"
    "total_net_output_bytes:54920\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:92.48\r\n"
    "instantaneous_output_kbps:5.20\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:1840\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:2213\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:209\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:746\r\n"
    "total_writes_processed:427\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n"
    "errorstat_OOM:count=209\r\n";

/* then CONFIG RESETSTAT */
static const char R_RESETSTAT[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033575124122\r\n"
    "uptime_in_seconds:6\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871463\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1040856\r\n"
    "used_memory_human:1016.46K\r\n"
    "used_memory_rss:12611584\r\n"
    "used_memory_rss_human:12.03M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:87.43%\r\n"
    "used_memory_overhead:880992\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:159864\r\n"
    "used_memory_dataset_perc:97.05%\r\n"
    "allocator_allocated:1583560\r\n"
    "allocator_active:1937408\r\n"
    "allocator_resident:4628480\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:1138696\r\n"
    "maxmemory_human:1.09M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.22\r\n"
    "allocator_frag_bytes:353848\r\n"
    "allocator_rss_ratio:2.39\r\n"
    "allocator_rss_bytes:2691072\r\n"
    "rss_overhead_ratio:2.72\r\n"
    "rss_overhead_bytes:7983104\r\n"
    "mem_fragmentation_ratio:12.60\r\n"
    "mem_fragmentation_bytes:11610640\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:1\r\n"
    "total_commands_processed:1\r\n"
    "instantaneous_ops_per_sec:20\r\n"
    "total_net_input_bytes:14\r\n"
    "total_net_output_bytes:5\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.10\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:2\r\n"
    "total_writes_processed:1\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* CONFIG SET maxmemory 10mb, FLUSHALL, REPLICAOF 127.0.0.1 17390 (nothing
 * listens there) */
static const char R_REPLICA[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033576156858\r\n"
    "uptime_in_seconds:7\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871464\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1057816\r\n"
    "used_memory_human:1.01M\r\n"
    "used_memory_rss:12611584\r\n"
    "used_memory_rss_human:12.03M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:88.86%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:181488\r\n"
    "used_memory_dataset_perc:99.89%\r\n"
    "allocator_allocated:1522088\r\n"
    "allocator_active:1904640\r\n"
    "allocator_resident:4579328\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.25\r\n"
    "allocator_frag_bytes:382552\r\n"
    "allocator_rss_ratio:2.40\r\n"
    "allocator_rss_bytes:2674688\r\n"
    "rss_overhead_ratio:2.75\r\n"
    "rss_overhead_bytes:8032256\r\n"
    "mem_fragmentation_ratio:12.39\r\n"
    "mem_fragmentation_bytes:11593680\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:5\r\n"
    "total_commands_processed:5\r\n"
    "instantaneous_ops_per_sec:23\r\n"
    "total_net_input_bytes:141\r\n"
    "total_net_output_bytes:4951\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.08\r\n"
    "instantaneous_output_kbps:3.09\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:10\r\n"
    "total_writes_processed:5\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:slave\r\n"
    "master_host:127.0.0.1\r\n"
    "master_port:17390\r\n"
    "master_link_status:down\r\n"
    "master_last_io_seconds_ago:-1\r\n"
    "master_sync_in_progress:0\r\n"
    "slave_read_repl_offset:0\r\n"
    "slave_repl_offset:0\r\n"
    "master_link_down_since_seconds:-1\r\n"
    "slave_priority:100\r\n"
    "slave_read_only:1\r\n"
    "replica_announced:1\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then REPLICAOF NO ONE */
static const char R_PRIMARY[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:5059\r\n"
    "process_supervised:no\r\n"
    "run_id:328a48ddd74eae51397df95d750875fcc6978603\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033576171263\r\n"
    "uptime_in_seconds:7\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871464\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1040304\r\n"
    "used_memory_human:1015.92K\r\n"
    "used_memory_rss:12611584\r\n"
    "used_memory_rss_human:12.03M\r\n"
    "used_memory_peak:1190464\r\n"
    "used_memory_peak_human:1.14M\r\n"
    "used_memory_peak_perc:87.39%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:163976\r\n"
    "used_memory_dataset_perc:99.88%\r\n"
    "allocator_allocated:1522088\r\n"
    "allocator_active:1904640\r\n"
    "allocator_resident:4579328\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.25\r\n"
    "allocator_frag_bytes:382552\r\n"
    "allocator_rss_ratio:2.40\r\n"
    "allocator_rss_bytes:2674688\r\n"
    "rss_overhead_ratio:2.75\r\n"
    "rss_overhead_bytes:8032256\r\n"
    "mem_fragmentation_ratio:12.39\r\n"
    "mem_fragmentation_bytes:11593680\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:7\r\n"
    "total_commands_processed:7\r\n"
    "instantaneous_ops_per_sec:23\r\n"
    "total_net_input_bytes:191\r\n"
    "total_net_output_bytes:10124\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.08\r\n"
    "instantaneous_output_kbps:3.09\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:14\r\n"
    "total_writes_processed:7\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:778b9d1b39c878ae469573d5590839bcbc17259c\r\n"
    "master_replid2:cf8db7cc8d23d4ce4eb64247e8d7af183533c0a3\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* the same redis-server stopped and started again: new run_id, default
 * configuration */
static const char R_RESTARTED[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:6528\r\n"
    "process_supervised:no\r\n"
    "run_id:966958ca9c34778cb709b6c16116fa00a79da460\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033577368657\r\n"
    "uptime_in_seconds:1\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871465\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:941584\r\n"
    "used_memory_human:919.52K\r\n"
    "used_memory_rss:12218368\r\n"
    "used_memory_rss_human:11.65M\r\n"
    "used_memory_peak:941584\r\n"
    "used_memory_peak_human:919.52K\r\n"
    "used_memory_peak_perc:100.26%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:65256\r\n"
    "used_memory_dataset_perc:99.69%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:0\r\n"
    "maxmemory_human:0B\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.68\r\n"
    "rss_overhead_bytes:7667712\r\n"
    "mem_fragmentation_ratio:13.56\r\n"
    "mem_fragmentation_bytes:11317384\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:2\r\n"
    "total_commands_processed:1\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:28\r\n"
    "total_net_output_bytes:7\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.01\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:3\r\n"
    "total_writes_processed:1\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:c5f551a2e5e6ec70e48c420c17eee4090cb775d5\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then CONFIG SET maxmemory 10mb */
static const char R_RESTARTED_LIMIT[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:6528\r\n"
    "process_supervised:no\r\n"
    "run_id:966958ca9c34778cb709b6c16116fa00a79da460\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033577381803\r\n"
    "uptime_in_seconds:1\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871465\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:990960\r\n"
    "used_memory_human:967.73K\r\n"
    "used_memory_rss:12218368\r\n"
    "used_memory_rss_human:11.65M\r\n"
    "used_memory_peak:990960\r\n"
    "used_memory_peak_human:967.73K\r\n"
    "used_memory_peak_perc:100.16%\r\n"
    "used_memory_overhead:876328\r\n"
    "used_memory_startup:876128\r\n"
    "used_memory_dataset:114632\r\n"
    "used_memory_dataset_perc:99.83%\r\n"
    "allocator_allocated:1735904\r\n"
    "allocator_active:1880064\r\n"
    "allocator_resident:4550656\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:144160\r\n"
    "allocator_rss_ratio:2.42\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.68\r\n"
    "rss_overhead_bytes:7667712\r\n"
    "mem_fragmentation_ratio:13.56\r\n"
    "mem_fragmentation_bytes:11317384\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:4\r\n"
    "total_commands_processed:3\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:92\r\n"
    "total_net_output_bytes:4896\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.01\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:7\r\n"
    "total_writes_processed:3\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:c5f551a2e5e6ec70e48c420c17eee4090cb775d5\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* another redis-server: CONFIG SET maxmemory 10mb, 20 small SETs */
static const char R_QUIET[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:25108\r\n"
    "process_supervised:no\r\n"
    "run_id:f6ede445ca588fee5d8b90b42f522c6e53a0332f\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033803366562\r\n"
    "uptime_in_seconds:1\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871691\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:992744\r\n"
    "used_memory_human:969.48K\r\n"
    "used_memory_rss:12206080\r\n"
    "used_memory_rss_human:11.64M\r\n"
    "used_memory_peak:992744\r\n"
    "used_memory_peak_human:969.48K\r\n"
    "used_memory_peak_perc:100.24%\r\n"
    "used_memory_overhead:877472\r\n"
    "used_memory_startup:876088\r\n"
    "used_memory_dataset:115272\r\n"
    "used_memory_dataset_perc:98.81%\r\n"
    "allocator_allocated:1785056\r\n"
    "allocator_active:1937408\r\n"
    "allocator_resident:4608000\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.09\r\n"
    "allocator_frag_bytes:152352\r\n"
    "allocator_rss_ratio:2.38\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.65\r\n"
    "rss_overhead_bytes:7598080\r\n"
    "mem_fragmentation_ratio:12.83\r\n"
    "mem_fragmentation_bytes:11254840\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:23\r\n"
    "total_commands_processed:22\r\n"
    "instantaneous_ops_per_sec:7\r\n"
    "total_net_input_bytes:680\r\n"
    "total_net_output_bytes:112\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.23\r\n"
    "instantaneous_output_kbps:0.04\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:45\r\n"
    "total_writes_processed:22\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:1d4b0ae3c42b142eb4a6e40f5a8da55510aca6c2\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* then CONFIG RESETSTAT (nothing was evicted or refused before) */
static const char R_QUIET_RESET[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:25108\r\n"
    "process_supervised:no\r\n"
    "run_id:f6ede445ca588fee5d8b90b42f522c6e53a0332f\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033803383036\r\n"
    "uptime_in_seconds:1\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871691\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:943336\r\n"
    "used_memory_human:921.23K\r\n"
    "used_memory_rss:12206080\r\n"
    "used_memory_rss_human:11.64M\r\n"
    "used_memory_peak:1015672\r\n"
    "used_memory_peak_human:991.87K\r\n"
    "used_memory_peak_perc:92.88%\r\n"
    "used_memory_overhead:877472\r\n"
    "used_memory_startup:876088\r\n"
    "used_memory_dataset:65864\r\n"
    "used_memory_dataset_perc:97.94%\r\n"
    "allocator_allocated:1785056\r\n"
    "allocator_active:1937408\r\n"
    "allocator_resident:4608000\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.09\r\n"
    "allocator_frag_bytes:152352\r\n"
    "allocator_rss_ratio:2.38\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.65\r\n"
    "rss_overhead_bytes:7598080\r\n"
    "mem_fragmentation_ratio:12.83\r\n"
    "mem_fragmentation_bytes:11254840\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:1\r\n"
    "total_commands_processed:1\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:14\r\n"
    "total_net_output_bytes:5\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:0\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:2\r\n"
    "total_writes_processed:1\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:1d4b0ae3c42b142eb4a6e40f5a8da55510aca6c2\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n";

/* a redis-server started with --maxmemory 10mb --maxmemory-policy
 * noeviction --rename-command CONFIG '' (CONFIG GET answers: ERR unknown
 * command 'config') */
static const char R_NOCONFIG[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "redis_git_dirty:0\r\n"
    "redis_build_id:ae4d7c971a948f0\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux 6.18.44-fc-v595 x86_64\r\n"
    "arch_bits:64\r\n"
    "monotonic_clock:POSIX clock_gettime\r\n"
    "multiplexing_api:epoll\r\n"
    "atomicvar_api:c11-builtin\r\n"
    "gcc_version:12.2.0\r\n"
    "process_id:6627\r\n"
    "process_supervised:no\r\n"
    "run_id:f1a76140b5aa3ace59f76f0a00974ab27920c4fa\r\n"
    "tcp_port:17379\r\n"
    "server_time_usec:1796033577596963\r\n"
    "uptime_in_seconds:0\r\n"
    "uptime_in_days:0\r\n"
    "hz:10\r\n"
    "configured_hz:10\r\n"
    "lru_clock:871465\r\n"
    "executable:/tmp/fx/redis-server\r\n"
    "config_file:\r\n"
    "io_threads_active:0\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:941848\r\n"
    "used_memory_human:919.77K\r\n"
    "used_memory_rss:12152832\r\n"
    "used_memory_rss_human:11.59M\r\n"
    "used_memory_peak:941848\r\n"
    "used_memory_peak_human:919.77K\r\n"
    "used_memory_peak_perc:100.26%\r\n"
    "used_memory_overhead:876560\r\n"
    "used_memory_startup:876360\r\n"
    "used_memory_dataset:65288\r\n"
    "used_memory_dataset_perc:99.69%\r\n"
    "allocator_allocated:1690848\r\n"
    "allocator_active:1826816\r\n"
    "allocator_resident:4497408\r\n"
    "total_system_memory:25276514304\r\n"
    "total_system_memory_human:23.54G\r\n"
    "used_memory_lua:32768\r\n"
    "used_memory_vm_eval:32768\r\n"
    "used_memory_lua_human:32.00K\r\n"
    "used_memory_scripts_eval:0\r\n"
    "number_of_cached_scripts:0\r\n"
    "number_of_functions:0\r\n"
    "number_of_libraries:0\r\n"
    "used_memory_vm_functions:33792\r\n"
    "used_memory_vm_total:66560\r\n"
    "used_memory_vm_total_human:65.00K\r\n"
    "used_memory_functions:200\r\n"
    "used_memory_scripts:200\r\n"
    "used_memory_scripts_human:200B\r\n"
    "maxmemory:10485760\r\n"
    "maxmemory_human:10.00M\r\n"
    "maxmemory_policy:noeviction\r\n"
    "allocator_frag_ratio:1.08\r\n"
    "allocator_frag_bytes:135968\r\n"
    "allocator_rss_ratio:2.46\r\n"
    "allocator_rss_bytes:2670592\r\n"
    "rss_overhead_ratio:2.70\r\n"
    "rss_overhead_bytes:7655424\r\n"
    "mem_fragmentation_ratio:13.87\r\n"
    "mem_fragmentation_bytes:11276328\r\n"
    "mem_not_counted_for_evict:0\r\n"
    "mem_replication_backlog:0\r\n"
    "mem_total_replication_buffers:0\r\n"
    "mem_clients_slaves:0\r\n"
    "mem_clients_normal:0\r\n"
    "mem_cluster_links:0\r\n"
    "mem_aof_buffer:0\r\n"
    "mem_allocator:jemalloc-5.3.0\r\n"
    "active_defrag_running:0\r\n"
    "lazyfree_pending_objects:0\r\n"
    "lazyfreed_objects:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_connections_received:3\r\n"
    "total_commands_processed:1\r\n"
    "instantaneous_ops_per_sec:0\r\n"
    "total_net_input_bytes:68\r\n"
    "total_net_output_bytes:84\r\n"
    "total_net_repl_input_bytes:0\r\n"
    "total_net_repl_output_bytes:0\r\n"
    "instantaneous_input_kbps:0.00\r\n"
    "instantaneous_output_kbps:0.00\r\n"
    "instantaneous_input_repl_kbps:0.00\r\n"
    "instantaneous_output_repl_kbps:0.00\r\n"
    "rejected_connections:0\r\n"
    "sync_full:0\r\n"
    "sync_partial_ok:0\r\n"
    "sync_partial_err:0\r\n"
    "expired_keys:0\r\n"
    "expired_stale_perc:0.00\r\n"
    "expired_time_cap_reached_count:0\r\n"
    "expire_cycle_cpu_milliseconds:0\r\n"
    "evicted_keys:0\r\n"
    "evicted_clients:0\r\n"
    "total_eviction_exceeded_time:0\r\n"
    "current_eviction_exceeded_time:0\r\n"
    "keyspace_hits:0\r\n"
    "keyspace_misses:0\r\n"
    "pubsub_channels:0\r\n"
    "pubsub_patterns:0\r\n"
    "pubsubshard_channels:0\r\n"
    "latest_fork_usec:0\r\n"
    "total_forks:0\r\n"
    "migrate_cached_sockets:0\r\n"
    "slave_expires_tracked_keys:0\r\n"
    "active_defrag_hits:0\r\n"
    "active_defrag_misses:0\r\n"
    "active_defrag_key_hits:0\r\n"
    "active_defrag_key_misses:0\r\n"
    "total_active_defrag_time:0\r\n"
    "current_active_defrag_time:0\r\n"
    "tracking_total_keys:0\r\n"
    "tracking_total_items:0\r\n"
    "tracking_total_prefixes:0\r\n"
    "unexpected_error_replies:0\r\n"
    "total_error_replies:1\r\n"
    "dump_payload_sanitizations:0\r\n"
    "total_reads_processed:5\r\n"
    "total_writes_processed:2\r\n"
    "io_threaded_reads_processed:0\r\n"
    "io_threaded_writes_processed:0\r\n"
    "reply_buffer_shrinks:0\r\n"
    "reply_buffer_expands:0\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:0\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:4031553701865529bde242f4cc27e9e8a2d40044\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:0\r\n"
    "second_repl_offset:-1\r\n"
    "repl_backlog_active:0\r\n"
    "repl_backlog_size:1048576\r\n"
    "repl_backlog_first_byte_offset:0\r\n"
    "repl_backlog_histlen:0\r\n"
    "\r\n"
    "# Errorstats\r\n"
    "errorstat_ERR:count=1\r\n";

/* ------------------------------------------------------------------ */
/* Fixtures: memcached stats and stats settings                        */

/* memcached -m 2 (evictions on, slab page mover on) */
static const char MC_DEFAULT[] =
    "server 127.0.0.1:11211\n"
    "pid 2766\n"
    "uptime 3\n"
    "time 1796033539\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.007436\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "slab_reassign_rescues 0\n"
    "slab_reassign_chunk_rescues 0\n"
    "slab_reassign_evictions_nomem 0\n"
    "slab_reassign_inline_reclaim 0\n"
    "slab_reassign_busy_items 0\n"
    "slab_reassign_busy_deletes 0\n"
    "slab_reassign_running 0\n"
    "slabs_moved 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* then 6000 sets of 1000 bytes: evictions */
static const char MC_EVICTED[] =
    "server 127.0.0.1:11211\n"
    "pid 2766\n"
    "uptime 3\n"
    "time 1796033539\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.025738\n"
    "rusage_system 0.199412\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 6\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 65536\n"
    "read_buf_count 8\n"
    "read_buf_bytes 131072\n"
    "read_buf_bytes_free 49152\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 6000\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 6130920\n"
    "bytes_written 52092\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "slab_reassign_rescues 0\n"
    "slab_reassign_chunk_rescues 0\n"
    "slab_reassign_evictions_nomem 0\n"
    "slab_reassign_inline_reclaim 0\n"
    "slab_reassign_busy_items 0\n"
    "slab_reassign_busy_deletes 0\n"
    "slab_reassign_running 0\n"
    "slabs_moved 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 676\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 1883280\n"
    "curr_items 1770\n"
    "total_items 6000\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 4230\n"
    "evicted_active 0\n"
    "evictions 4230\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 5645\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 4238\n"
    "lru_bumps_dropped 0\n";

/* then stats reset */
static const char MC_RESET[] =
    "server 127.0.0.1:11211\n"
    "pid 2766\n"
    "uptime 3\n"
    "time 1796033539\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.025791\n"
    "rusage_system 0.199824\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 1\n"
    "rejected_connections 0\n"
    "connection_structures 3\n"
    "response_obj_oom 0\n"
    "response_obj_count 0\n"
    "response_obj_bytes 0\n"
    "read_buf_count 8\n"
    "read_buf_bytes 131072\n"
    "read_buf_bytes_free 49152\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 7\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "slab_reassign_rescues 0\n"
    "slab_reassign_chunk_rescues 0\n"
    "slab_reassign_evictions_nomem 0\n"
    "slab_reassign_inline_reclaim 0\n"
    "slab_reassign_busy_items 0\n"
    "slab_reassign_busy_deletes 0\n"
    "slab_reassign_running 0\n"
    "slabs_moved 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 0\n"
    "lru_maintainer_juggles 1\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 1883280\n"
    "curr_items 1770\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* memcached -M */
static const char MC_M[] =
    "server 127.0.0.1:11211\n"
    "pid 2834\n"
    "uptime 3\n"
    "time 1796033541\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.009000\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 67108864\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "slab_reassign_rescues 0\n"
    "slab_reassign_chunk_rescues 0\n"
    "slab_reassign_evictions_nomem 0\n"
    "slab_reassign_inline_reclaim 0\n"
    "slab_reassign_busy_items 0\n"
    "slab_reassign_busy_deletes 0\n"
    "slab_reassign_running 0\n"
    "slabs_moved 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* memcached -o no_slab_reassign */
static const char MC_NOSLAB[] =
    "server 127.0.0.1:11211\n"
    "pid 2844\n"
    "uptime 3\n"
    "time 1796033543\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.008923\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 67108864\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* memcached -M -o no_slab_reassign -m 2 */
static const char MC_SAFE[] =
    "server 127.0.0.1:11211\n"
    "pid 2853\n"
    "uptime 4\n"
    "time 1796033546\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.008166\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 48\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* then 6000 sets of 1000 bytes: SERVER_ERROR out of memory storing object */
static const char MC_FULL[] =
    "server 127.0.0.1:11211\n"
    "pid 2853\n"
    "uptime 4\n"
    "time 1796033546\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.030932\n"
    "rusage_system 0.081198\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 6\n"
    "rejected_connections 0\n"
    "connection_structures 3\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 65536\n"
    "read_buf_count 8\n"
    "read_buf_bytes 131072\n"
    "read_buf_bytes_free 49152\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 1770\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 4230\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 6130920\n"
    "bytes_written 199883\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 49\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 1882170\n"
    "curr_items 1770\n"
    "total_items 1770\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 1770\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 42300\n"
    "lru_bumps_dropped 0\n";

/* the same memcached -M -o no_slab_reassign -m 2 stopped and started
 * again: new pid */
static const char MC_SAFE_RESTARTED[] =
    "server 127.0.0.1:11211\n"
    "pid 2940\n"
    "uptime 3\n"
    "time 1796033548\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.005596\n"
    "rusage_system 0.000000\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* two servers: the restarted one above as 127.0.0.1:11211 and memcached -M
 * -o no_slab_reassign (64 MB) as 127.0.0.1:11212 */
static const char MC_TWO[] =
    "server 127.0.0.1:11211\n"
    "pid 2940\n"
    "uptime 4\n"
    "time 1796033549\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.006473\n"
    "rusage_system 0.000000\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 5\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 49152\n"
    "read_buf_count 7\n"
    "read_buf_bytes 114688\n"
    "read_buf_bytes_free 49152\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 30\n"
    "bytes_written 3833\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 49\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n"
    "server 127.0.0.1:11212\n"
    "pid 2999\n"
    "uptime 3\n"
    "time 1796033549\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.007715\n"
    "rusage_system 0.000000\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 3\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 3\n"
    "read_buf_bytes 49152\n"
    "read_buf_bytes_free 16384\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 67108864\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* another memcached -M -o no_slab_reassign -m 2: 20 sets of 100 bytes */
static const char MC_QUIET[] =
    "server 127.0.0.1:11211\n"
    "pid 25187\n"
    "uptime 3\n"
    "time 1796033804\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.010282\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 4\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 32768\n"
    "read_buf_count 5\n"
    "read_buf_bytes 81920\n"
    "read_buf_bytes_free 32768\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 20\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 2377\n"
    "bytes_written 160\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 43\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 3230\n"
    "curr_items 20\n"
    "total_items 20\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* then stats reset (nothing was evicted or refused before) */
static const char MC_QUIET_RESET[] =
    "server 127.0.0.1:11211\n"
    "pid 25187\n"
    "uptime 3\n"
    "time 1796033804\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.000000\n"
    "rusage_system 0.010927\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 1\n"
    "rejected_connections 0\n"
    "connection_structures 3\n"
    "response_obj_oom 0\n"
    "response_obj_count 0\n"
    "response_obj_bytes 0\n"
    "read_buf_count 8\n"
    "read_buf_bytes 131072\n"
    "read_buf_bytes_free 49152\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 7\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 0\n"
    "lru_maintainer_juggles 0\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 3230\n"
    "curr_items 20\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n";

/* what the memcache backend's info() itself returned (a scratch program
 * linked with librsp, store memcache://127.0.0.1:17211,127.0.0.1:17212)
 * with memcached -M -o no_slab_reassign -m 2 on 17211 and nothing on
 * 17212: real port names, and the backend's "error" block for the server
 * that did not answer */
static const char MC_HALF[] =
    "server 127.0.0.1:17211\n"
    "pid 26510\n"
    "uptime 7\n"
    "time 1796033862\n"
    "version 1.6.18\n"
    "libevent 2.1.12-stable\n"
    "pointer_size 64\n"
    "rusage_user 0.006383\n"
    "rusage_system 0.005347\n"
    "max_connections 1024\n"
    "curr_connections 1\n"
    "total_connections 2\n"
    "rejected_connections 0\n"
    "connection_structures 2\n"
    "response_obj_oom 0\n"
    "response_obj_count 1\n"
    "response_obj_bytes 16384\n"
    "read_buf_count 2\n"
    "read_buf_bytes 32768\n"
    "read_buf_bytes_free 0\n"
    "read_buf_oom 0\n"
    "reserved_fds 20\n"
    "cmd_get 0\n"
    "cmd_set 0\n"
    "cmd_flush 0\n"
    "cmd_touch 0\n"
    "cmd_meta 0\n"
    "get_hits 0\n"
    "get_misses 0\n"
    "get_expired 0\n"
    "get_flushed 0\n"
    "delete_misses 0\n"
    "delete_hits 0\n"
    "incr_misses 0\n"
    "incr_hits 0\n"
    "decr_misses 0\n"
    "decr_hits 0\n"
    "cas_misses 0\n"
    "cas_hits 0\n"
    "cas_badval 0\n"
    "touch_hits 0\n"
    "touch_misses 0\n"
    "store_too_large 0\n"
    "store_no_memory 0\n"
    "auth_cmds 0\n"
    "auth_errors 0\n"
    "bytes_read 7\n"
    "bytes_written 0\n"
    "limit_maxbytes 2097152\n"
    "accepting_conns 1\n"
    "listen_disabled_num 0\n"
    "time_in_listen_disabled_us 0\n"
    "threads 4\n"
    "conn_yields 0\n"
    "hash_power_level 16\n"
    "hash_bytes 524288\n"
    "hash_is_expanding 0\n"
    "lru_crawler_running 0\n"
    "lru_crawler_starts 1\n"
    "lru_maintainer_juggles 56\n"
    "malloc_fails 0\n"
    "log_worker_dropped 0\n"
    "log_worker_written 0\n"
    "log_watcher_skipped 0\n"
    "log_watcher_sent 0\n"
    "log_watchers 0\n"
    "unexpected_napi_ids 0\n"
    "round_robin_fallback 0\n"
    "bytes 0\n"
    "curr_items 0\n"
    "total_items 0\n"
    "slab_global_page_pool 0\n"
    "expired_unfetched 0\n"
    "evicted_unfetched 0\n"
    "evicted_active 0\n"
    "evictions 0\n"
    "reclaimed 0\n"
    "crawler_reclaimed 0\n"
    "crawler_items_checked 0\n"
    "lrutail_reflocked 0\n"
    "moves_to_cold 0\n"
    "moves_to_warm 0\n"
    "moves_within_lru 0\n"
    "direct_reclaims 0\n"
    "lru_bumps_dropped 0\n"
    "server 127.0.0.1:17212\n"
    "error memcached 127.0.0.1:17212: connect to 127.0.0.1:17212: Connection refused\n";

/* the same for stats settings */
static const char MC_SET_HALF[] =
    "server 127.0.0.1:17211\n"
    "maxbytes 2097152\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions off\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign no\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n"
    "server 127.0.0.1:17212\n"
    "error memcached 127.0.0.1:17212: connect to 127.0.0.1:17212: Connection refused\n";

/* stats settings of memcached -m 2 */
static const char MC_SET_DEFAULT[] =
    "server 127.0.0.1:11211\n"
    "maxbytes 2097152\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions on\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign yes\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n";

/* stats settings of memcached -M */
static const char MC_SET_M[] =
    "server 127.0.0.1:11211\n"
    "maxbytes 67108864\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions off\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign yes\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n";

/* stats settings of memcached -o no_slab_reassign */
static const char MC_SET_NOSLAB[] =
    "server 127.0.0.1:11211\n"
    "maxbytes 67108864\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions on\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign no\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n";

/* stats settings of memcached -M -o no_slab_reassign -m 2 */
static const char MC_SET_SAFE[] =
    "server 127.0.0.1:11211\n"
    "maxbytes 2097152\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions off\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign no\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n";

/* stats settings of the two servers of MC_TWO */
static const char MC_SET_TWO[] =
    "server 127.0.0.1:11211\n"
    "maxbytes 2097152\n"
    "maxconns 1024\n"
    "tcpport 17211\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions off\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign no\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n"
    "server 127.0.0.1:11212\n"
    "maxbytes 67108864\n"
    "maxconns 1024\n"
    "tcpport 17212\n"
    "udpport 0\n"
    "inter 127.0.0.1\n"
    "verbosity 0\n"
    "oldest 0\n"
    "evictions off\n"
    "domain_socket NULL\n"
    "umask 700\n"
    "shutdown_command no\n"
    "growth_factor 1.25\n"
    "chunk_size 48\n"
    "num_threads 4\n"
    "num_threads_per_udp 4\n"
    "stat_key_prefix :\n"
    "detail_enabled no\n"
    "reqs_per_event 20\n"
    "cas_enabled yes\n"
    "tcp_backlog 1024\n"
    "binding_protocol auto-negotiate\n"
    "auth_enabled_sasl no\n"
    "auth_enabled_ascii no\n"
    "item_size_max 1048576\n"
    "maxconns_fast yes\n"
    "hashpower_init 0\n"
    "slab_reassign no\n"
    "slab_automove 1\n"
    "slab_automove_ratio 0.80\n"
    "slab_automove_window 30\n"
    "slab_chunk_max 524288\n"
    "lru_crawler yes\n"
    "lru_crawler_sleep 100\n"
    "lru_crawler_tocrawl 0\n"
    "tail_repair_time 0\n"
    "flush_enabled yes\n"
    "dump_enabled yes\n"
    "hash_algorithm murmur3\n"
    "lru_maintainer_thread yes\n"
    "lru_segmented yes\n"
    "hot_lru_pct 20\n"
    "warm_lru_pct 40\n"
    "hot_max_factor 0.20\n"
    "warm_max_factor 2.00\n"
    "temp_lru no\n"
    "temporary_ttl 61\n"
    "idle_timeout 0\n"
    "watcher_logbuf_size 262144\n"
    "worker_logbuf_size 65536\n"
    "read_buf_mem_limit 0\n"
    "track_sizes no\n"
    "inline_ascii_response no\n"
    "ext_item_size 512\n"
    "ext_item_age 4294967295\n"
    "ext_low_ttl 0\n"
    "ext_recache_rate 2000\n"
    "ext_wbuf_size 4194304\n"
    "ext_compact_under 0\n"
    "ext_drop_under 0\n"
    "ext_max_sleep 1000000\n"
    "ext_max_frag 0.80\n"
    "slab_automove_freeratio 0.010\n"
    "ext_drop_unread no\n"
    "ssl_enabled no\n"
    "ssl_chain_cert (null)\n"
    "ssl_key (null)\n"
    "ssl_verify_mode 0\n"
    "ssl_keyformat 1\n"
    "ssl_ciphers NULL\n"
    "ssl_ca_cert NULL\n"
    "ssl_wbuf_size 16384\n"
    "ssl_session_cache no\n"
    "ssl_kernel_tls no\n"
    "ssl_min_version tlsv1.2\n"
    "num_napi_ids (null)\n"
    "memory_file (null)\n";

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

#define REDIS_NAME "redis://127.0.0.1:17379"
#define MC_NAME "127.0.0.1:11211"
#define RUN_ID_A "328a48ddd74eae51397df95d750875fcc6978603"
#define RUN_ID_B "966958ca9c34778cb709b6c16116fa00a79da460"

/* 2026-11-30T10:00:00Z, a few minutes before the captures were made */
#define T0_SEC APR_INT64_C(1796032800)
#define T0 apr_time_from_sec(T0_SEC)
#define SEC(n) apr_time_from_sec(n)

#define WINDOW_S 3600

static const rsp_monitor_params_t params = {
    WINDOW_S,           /* longest_window_s */
    80,                 /* headroom_warn_pct */
    APR_USEC_PER_SEC * 300 /* unreachable_repeat: 5 minutes */
};

/* text with the one occurrence of from replaced by to (for the few
 * fixtures a real server cannot be made to produce) */
static const char *edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);

    ck_assert_msg(at != NULL, "fixture lacks \"%s\"", from);
    ck_assert_msg(strstr(at + 1, from) == NULL, "\"%s\" twice", from);
    return apr_pstrcat(pool, apr_pstrndup(pool, text, (apr_size_t)(at - text)),
                       to, at + strlen(from), NULL);
}

/* Redis INFO parsed, named as the glue names it (its store URL) */
static rsp_health_t redis(const char *info)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, info), APR_SUCCESS);
    apr_cpystrn(h.name, REDIS_NAME, sizeof(h.name));
    return h;
}

/* the parsed memcached servers, checking how many there are */
static apr_array_header_t *mc_all(const char *stats, const char *settings,
                                  int n)
{
    apr_array_header_t *out = NULL;

    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, stats, settings),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(out->nelts, n);
    return out;
}

#define MC_IDX(a, i) (&APR_ARRAY_IDX((a), (i), rsp_health_t))

/* the one memcached server of a one-server stats text */
static rsp_health_t mc(const char *stats, const char *settings)
{
    return *MC_IDX(mc_all(stats, settings, 1), 0);
}

/* what the glue feeds the monitor when a store does not answer */
static rsp_health_t down(const char *name, const char *error)
{
    rsp_health_t h;

    memset(&h, 0, sizeof(h));
    apr_cpystrn(h.name, name, sizeof(h.name));
    apr_cpystrn(h.error, error, sizeof(h.error));
    return h;
}

/* one poll at time `polled`; the alarms it raised */
static apr_array_header_t *step(rsp_monitor_state_t *st, rsp_health_t h,
                                apr_time_t polled)
{
    apr_array_header_t *alarms = apr_array_make(pool, 4, sizeof(rsp_alarm_t));

    h.polled = polled;
    rsp_monitor_step(st, &h, &params, pool, alarms);
    return alarms;
}

static const char *kind_name(rsp_alarm_kind_t k)
{
    switch (k) {
    case RSP_ALARM_POLICY: return "POLICY";
    case RSP_ALARM_POLICY_OK: return "POLICY_OK";
    case RSP_ALARM_EVICTION: return "EVICTION";
    case RSP_ALARM_LOSS: return "LOSS";
    case RSP_ALARM_REFUSALS: return "REFUSALS";
    case RSP_ALARM_HEADROOM: return "HEADROOM";
    case RSP_ALARM_HEADROOM_OK: return "HEADROOM_OK";
    case RSP_ALARM_UNREACHABLE: return "UNREACHABLE";
    case RSP_ALARM_REACHABLE: return "REACHABLE";
    case RSP_ALARM_ROLE: return "ROLE";
    case RSP_ALARM_ROLE_OK: return "ROLE_OK";
    case RSP_ALARM_REPLICAS: return "REPLICAS";
    case RSP_ALARM_REPLICAS_THIN: return "REPLICAS_THIN";
    case RSP_ALARM_REPLICAS_OK: return "REPLICAS_OK";
    case RSP_ALARM_FAILOVER: return "FAILOVER";
    }
    return "?";
}

/* the kinds raised, in order, comma-separated ("" for none) */
static const char *kinds(const apr_array_header_t *alarms)
{
    const char *s = "";
    int i;

    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        s = apr_pstrcat(pool, s, i ? "," : "", kind_name(a->kind), NULL);
    }
    return s;
}

static int count(const apr_array_header_t *alarms, rsp_alarm_kind_t k)
{
    int i, n = 0;

    for (i = 0; i < alarms->nelts; i++) {
        n += APR_ARRAY_IDX(alarms, i, rsp_alarm_t).kind == k;
    }
    return n;
}

/* the one alarm of kind k */
static const rsp_alarm_t *only(const apr_array_header_t *alarms,
                               rsp_alarm_kind_t k)
{
    int i;

    ck_assert_msg(count(alarms, k) == 1, "%d %s alarms in [%s]",
                  count(alarms, k), kind_name(k), kinds(alarms));
    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        if (a->kind == k) {
            ck_assert_ptr_nonnull(a->text);
            return a;
        }
    }
    return NULL;
}

#define ck_assert_has(text, part)                                          \
    ck_assert_msg(strstr((text), (part)) != NULL,                          \
                  "\"%s\" not in \"%s\"", (part), (text))
#define ck_assert_lacks(text, part)                                        \
    ck_assert_msg(strstr((text), (part)) == NULL,                          \
                  "\"%s\" in \"%s\"", (part), (text))

static const char *fmt(apr_time_t t)
{
    return rsp_format_time(pool, t);
}

/* ------------------------------------------------------------------ */
/* rsp_health_parse_redis                                              */

START_TEST(test_redis_default)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_DEFAULT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.uptime, 2);
    ck_assert_int_eq(h.evictions, 0);
    /* "# Errorstats" is there, without errorstat_OOM: none refused */
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 1);
    ck_assert_int_eq(h.used, 941584);
    ck_assert_int_eq(h.limit, 0);
    /* noeviction, but no maxmemory: it grows until the system kills it */
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "no maxmemory");
    ck_assert_int_eq(h.replica, 0);
    ck_assert_int_eq(h.reachable, 1);
    ck_assert_str_eq(h.error, "");
    ck_assert_str_eq(h.name, ""); /* the glue names it */
}
END_TEST

START_TEST(test_redis_noeviction_with_limit)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.limit, 10485760);
    ck_assert_int_eq(h.used, 990960);
    ck_assert_int_eq(h.activity, 3);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");
}
END_TEST

START_TEST(test_redis_evicting_policies)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_ALLKEYS), APR_SUCCESS);
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_str_eq(h.policy, "maxmemory-policy allkeys-lru");
    ck_assert_int_eq(h.limit, 10485760);

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_VOLATILE), APR_SUCCESS);
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_str_eq(h.policy, "maxmemory-policy volatile-lru");
}
END_TEST

START_TEST(test_redis_evicted)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_EVICTED), APR_SUCCESS);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 2011);
    ck_assert_int_eq(h.used, 1190464);
    ck_assert_int_eq(h.limit, 1189320);
    ck_assert_int_eq(h.evicting, 1);
}
END_TEST

START_TEST(test_redis_oom_refusals)
{
    rsp_health_t h;

    /* errorstat_OOM:count=209 */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_OOM), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, 209);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.uptime, 6);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_OOM_BEFORE), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, 0);
}
END_TEST

START_TEST(test_redis_resetstat)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_RESETSTAT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.uptime, 6);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 1);
}
END_TEST

START_TEST(test_redis_restarted)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_RESTARTED), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_B);
    ck_assert_int_eq(h.uptime, 1);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.activity, 1);
}
END_TEST

START_TEST(test_redis_replica)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_REPLICA), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 1);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_PRIMARY), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 0);
}
END_TEST

START_TEST(test_redis_without_config)
{
    rsp_health_t h;

    /* Managed Redis disables or renames CONFIG. The parser reads only the
     * INFO text (maxmemory and maxmemory_policy are in INFO memory), so
     * this Redis, whose CONFIG GET answered "ERR unknown command 'config'"
     * (counted in its Errorstats as errorstat_ERR), is read in full. */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_NOCONFIG), APR_SUCCESS);
    ck_assert_str_eq(h.instance, "f1a76140b5aa3ace59f76f0a00974ab27920c4fa");
    ck_assert_int_eq(h.uptime, 0);
    ck_assert_int_eq(h.limit, 10485760);
    ck_assert_int_eq(h.used, 941848);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");
    /* an error other than OOM is no refusal */
    ck_assert_int_eq(h.refusals, 0);
}
END_TEST

START_TEST(test_redis_without_errorstats)
{
    rsp_health_t h;
    /* INFO cut before "# Replication": no Errorstats section, so whether
     * anything was refused is unknown (-1), not 0 */
    const char *cut = apr_pstrndup(pool, R_OOM,
                                   (apr_size_t)(strstr(R_OOM, "# Replication")
                                                - R_OOM));

    ck_assert_int_eq(rsp_health_parse_redis(&h, cut), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, -1);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.replica, 0);
}
END_TEST

START_TEST(test_redis_lf_line_ends)
{
    rsp_health_t crlf, lf;
    char *text = apr_pstrdup(pool, R_OOM), *r, *w;

    for (r = w = text; *r; r++) {
        if (*r != '\r') {
            *w++ = *r;
        }
    }
    *w = '\0';
    ck_assert_int_eq(rsp_health_parse_redis(&crlf, R_OOM), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&lf, text), APR_SUCCESS);
    ck_assert_str_eq(lf.instance, crlf.instance);
    ck_assert_int_eq(lf.refusals, 209);
    ck_assert_int_eq(lf.used, crlf.used);
    ck_assert_int_eq(lf.limit, crlf.limit);
    ck_assert_str_eq(lf.policy, crlf.policy);
}
END_TEST

START_TEST(test_redis_rejects)
{
    rsp_health_t h;
    const char *memory = strstr(R_LIMIT, "# Memory");
    const char *server_only = apr_pstrndup(pool, R_LIMIT,
                                           (apr_size_t)(memory - R_LIMIT));

    ck_assert_int_eq(rsp_health_parse_redis(&h, ""), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, "garbage"), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, "\r\n\r\n"), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(
                         &h, "-ERR unknown command 'INFO'\r\n"), APR_EINVAL);
    /* INFO without the server section: no run_id, no uptime */
    ck_assert_int_eq(rsp_health_parse_redis(&h, memory), APR_EINVAL);
    /* INFO server only: no maxmemory, no policy */
    ck_assert_int_eq(rsp_health_parse_redis(&h, server_only), APR_EINVAL);
    /* memcached stats are not Redis INFO */
    ck_assert_int_eq(rsp_health_parse_redis(&h, MC_SAFE), APR_EINVAL);
}
END_TEST

/* Numbers no store reports (above 10^15): refused, so that sums,
 * percentages and microseconds of what is accepted fit in 64 bits. */
START_TEST(test_rejects_huge_numbers)
{
    rsp_health_t h;
    apr_array_header_t *out = NULL;

    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nused_memory:",
                                                     "\nused_memory:9" )), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
        "\nuptime_in_seconds:1000000000000001\r\n")), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
        "\nuptime_in_seconds:1000000000000000\r\n")), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nmaxmemory:10485760\r\n",
        "\nmaxmemory:92233720368547758\r\n")), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, edit(MC_SAFE, "\nuptime 4\n",
        "\nuptime 99999999999999999\n"), MC_SET_SAFE), APR_EINVAL);
}
END_TEST

/* An uptime longer than the epoch (accepted: under 10^15 s) dates a
 * restart at the poll, not before 1970. */
START_TEST(test_step_uptime_beyond_epoch)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    al = step(&st, redis(edit(R_RESTARTED_LIMIT, "\nuptime_in_seconds:",
                              "\nuptime_in_seconds:99999999999")), T0 + SEC(5));
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_has(a->text, fmt(T0 + SEC(5)));
}
END_TEST

START_TEST(test_redis_rejects_bad_numbers)
{
    rsp_health_t h1, h2;
    apr_status_t rv1, rv2, rv3;
    apr_array_header_t *out = NULL;

    /* A value that is not a number is as good as a missing one: the
     * header says numbers the store did not report are -1, and a missing
     * maxmemory or uptime_in_seconds makes the text unusable (APR_EINVAL).
     * Not "0 = no limit" (a policy alarm that names the wrong cause) nor
     * the digits before the junk. */
    rv1 = rsp_health_parse_redis(&h1, edit(R_LIMIT, "\nmaxmemory:10485760\r\n",
                                           "\nmaxmemory:lots\r\n"));
    rv2 = rsp_health_parse_redis(&h2, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
                                           "\nuptime_in_seconds:2x\r\n"));
    /* the same for memcached's uptime */
    rv3 = rsp_health_parse_memcache(
        &out, pool, edit(MC_SAFE, "\nuptime 4\n", "\nuptime 4x\n"),
        MC_SET_SAFE);
    ck_assert_msg(rv1 == APR_EINVAL && rv2 == APR_EINVAL && rv3 == APR_EINVAL,
                  "maxmemory:lots -> rv %d, limit %" APR_INT64_T_FMT
                  ", policy \"%s\"; uptime_in_seconds:2x -> rv %d, uptime %"
                  APR_INT64_T_FMT "; memcached uptime 4x -> rv %d, uptime %"
                  APR_INT64_T_FMT "; expected APR_EINVAL (%d) for all",
                  rv1, h1.limit, h1.policy, rv2, h2.uptime, rv3,
                  rv3 == APR_SUCCESS ? MC_IDX(out, 0)->uptime : -1,
                  APR_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_health_parse_memcache                                           */

START_TEST(test_mc_one_server)
{
    rsp_health_t h = mc(MC_EVICTED, MC_SET_DEFAULT);

    ck_assert_str_eq(h.name, MC_NAME);
    ck_assert_int_eq(h.reachable, 1);
    ck_assert_str_eq(h.instance, "2766");
    ck_assert_int_eq(h.uptime, 3);
    ck_assert_int_eq(h.evictions, 4230);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 6);
    ck_assert_int_eq(h.used, 1883280);
    ck_assert_int_eq(h.limit, 2097152);
    ck_assert_int_eq(h.replica, 0);
    /* no -M, slab page mover on: both named */
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "evictions on");
    ck_assert_has(h.policy, "slab page mover on");
}
END_TEST

START_TEST(test_mc_evictions_include_slab_mover)
{
    /* evictions + slab_reassign_evictions_nomem. The slab mover's count
     * could not be made non-zero on demand: the real text with 0 -> 7. */
    const char *stats = edit(MC_EVICTED, "\nslab_reassign_evictions_nomem 0\n",
                             "\nslab_reassign_evictions_nomem 7\n");
    rsp_health_t h = mc(stats, MC_SET_DEFAULT);

    ck_assert_int_eq(h.evictions, 4230 + 7);
    /* without that stat (-o no_slab_reassign), evictions alone */
    h = mc(MC_SAFE, MC_SET_SAFE);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_ptr_null(strstr(MC_SAFE, "slab_reassign_evictions_nomem"));
}
END_TEST

START_TEST(test_mc_refusals)
{
    rsp_health_t h = mc(MC_FULL, MC_SET_SAFE);

    ck_assert_str_eq(h.instance, "2853");
    ck_assert_int_eq(h.refusals, 4230);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.used, 1882170);
    ck_assert_int_eq(h.limit, 2097152);
}
END_TEST

START_TEST(test_mc_safe_settings)
{
    /* -M -o no_slab_reassign: cannot drop a claim */
    rsp_health_t h = mc(MC_SAFE, MC_SET_SAFE);

    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "evictions off (-M), slab page mover off");
    ck_assert_str_eq(h.instance, "2853");
    ck_assert_int_eq(h.uptime, 4);
    ck_assert_int_eq(h.used, 0);
}
END_TEST

START_TEST(test_mc_settings_without_M)
{
    /* -o no_slab_reassign but no -M: evictions on */
    rsp_health_t h = mc(MC_NOSLAB, MC_SET_NOSLAB);

    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "evictions on");
    ck_assert_lacks(h.policy, "slab page mover");
    ck_assert_int_eq(h.limit, 67108864);
}
END_TEST

START_TEST(test_mc_settings_slab_reassign)
{
    /* -M but the slab page mover on (slab_reassign yes) */
    rsp_health_t h = mc(MC_M, MC_SET_M);

    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "slab page mover on");
    ck_assert_lacks(h.policy, "evictions on");
}
END_TEST

START_TEST(test_mc_two_servers)
{
    apr_array_header_t *a = mc_all(MC_TWO, MC_SET_TWO, 2);

    ck_assert_str_eq(MC_IDX(a, 0)->name, "127.0.0.1:11211");
    ck_assert_str_eq(MC_IDX(a, 0)->instance, "2940");
    ck_assert_int_eq(MC_IDX(a, 0)->uptime, 4);
    ck_assert_int_eq(MC_IDX(a, 0)->limit, 2097152);
    ck_assert_int_eq(MC_IDX(a, 0)->activity, 5);
    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->name, "127.0.0.1:11212");
    ck_assert_str_eq(MC_IDX(a, 1)->instance, "2999");
    ck_assert_int_eq(MC_IDX(a, 1)->uptime, 3);
    ck_assert_int_eq(MC_IDX(a, 1)->limit, 67108864);
    ck_assert_int_eq(MC_IDX(a, 1)->activity, 3);
    ck_assert_int_eq(MC_IDX(a, 1)->evicting, 0);
}
END_TEST

START_TEST(test_mc_settings_go_to_their_server)
{
    /* the second server's settings are those of a memcached without -M:
     * only that server is evicting */
    const char *second = strstr(MC_SET_TWO, "server 127.0.0.1:11212\n");
    const char *settings = apr_pstrcat(
        pool, apr_pstrndup(pool, MC_SET_TWO, (apr_size_t)(second - MC_SET_TWO)),
        "server 127.0.0.1:11212\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), NULL);
    apr_array_header_t *a = mc_all(MC_TWO, settings, 2);

    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 0)->policy,
                     "evictions off (-M), slab page mover off");
    ck_assert_int_eq(MC_IDX(a, 1)->evicting, 1);
    ck_assert_has(MC_IDX(a, 1)->policy, "evictions on");
}
END_TEST

START_TEST(test_mc_settings_of_unknown_server_ignored)
{
    /* settings of a server that stats did not list: ignored, no server
     * added, and its "evictions on" does not stick to another one */
    const char *settings = apr_pstrcat(
        pool, "server 127.0.0.1:11299\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), MC_SET_SAFE, NULL);
    const char *settings2 = apr_pstrcat(
        pool, MC_SET_SAFE, "server 127.0.0.1:11299\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), NULL);
    rsp_health_t h = mc(MC_SAFE, settings);

    ck_assert_str_eq(h.name, MC_NAME);
    ck_assert_int_eq(h.evicting, 0);
    h = mc(MC_SAFE, settings2);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "evictions off (-M), slab page mover off");
}
END_TEST

#define HALF_ERROR "memcached 127.0.0.1:17212: connect to 127.0.0.1:17212: " \
    "Connection refused"

START_TEST(test_mc_server_down)
{
    /* one of two servers did not answer: the backend's "error" block makes
     * it an unreachable server, not an unreadable text */
    apr_array_header_t *a = mc_all(MC_HALF, MC_SET_HALF, 2);

    ck_assert_str_eq(MC_IDX(a, 0)->name, "127.0.0.1:17211");
    ck_assert_int_eq(MC_IDX(a, 0)->reachable, 1);
    ck_assert_str_eq(MC_IDX(a, 0)->instance, "26510");
    ck_assert_int_eq(MC_IDX(a, 0)->uptime, 7);
    ck_assert_int_eq(MC_IDX(a, 0)->limit, 2097152);
    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 0)->error, "");
    ck_assert_str_eq(MC_IDX(a, 1)->name, "127.0.0.1:17212");
    ck_assert_int_eq(MC_IDX(a, 1)->reachable, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->error, HALF_ERROR);
    ck_assert_str_eq(MC_IDX(a, 1)->instance, "");

    /* settings fetched without their own error blocks: the same */
    a = mc_all(MC_HALF, edit(MC_SET_HALF, "server 127.0.0.1:17212\nerror "
                             HALF_ERROR "\n", ""), 2);
    ck_assert_int_eq(MC_IDX(a, 0)->reachable, 1);
    ck_assert_int_eq(MC_IDX(a, 1)->reachable, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->error, HALF_ERROR);
}
END_TEST

START_TEST(test_mc_rejects)
{
    apr_array_header_t *out = NULL;

    /* no pid */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_SAFE, "\npid 2853\n", "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* no uptime */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_SAFE, "\nuptime 4\n", "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* one of two servers without its pid */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_TWO, "\npid 2999\n", "\n"),
                         MC_SET_TWO), APR_EINVAL);
    /* nothing, garbage, no "server" line */
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, "", MC_SET_SAFE),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, "ERROR\n", NULL),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, MC_SAFE + strlen("server " MC_NAME "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* a Redis INFO is not memcached stats */
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, R_LIMIT, NULL),
                     APR_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: policy                                            */

START_TEST(test_step_policy_first_poll)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    al = step(&st, redis(R_ALLKEYS), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "maxmemory-policy allkeys-lru");
    ck_assert_has(a->text, "3600 s");

    /* the same policy next poll: said once */
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0 + SEC(5))), "");

    /* noeviction without maxmemory is a policy alarm too */
    memset(&st, 0, sizeof(st));
    al = step(&st, redis(R_DEFAULT), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    ck_assert_has(only(al, RSP_ALARM_POLICY)->text, "no maxmemory");

    /* memcached without -M */
    memset(&st, 0, sizeof(st));
    al = step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "evictions on");

    /* a safe configuration: nothing at all */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), T0)), "");
}
END_TEST

START_TEST(test_step_policy_changes)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    /* CONFIG SET maxmemory-policy allkeys-lru at run time */
    al = step(&st, redis(R_ALLKEYS), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "POLICY");
    ck_assert_has(only(al, RSP_ALARM_POLICY)->text, "allkeys-lru");
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0 + SEC(10))), "");
    /* allkeys-lru -> volatile-lru: still evicting, said again */
    al = step(&st, redis(R_VOLATILE), T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "volatile-lru");
    ck_assert_str_eq(kinds(step(&st, redis(R_VOLATILE), T0 + SEC(20))), "");
    /* back to noeviction (R_OOM_BEFORE: after the evictions, memory at
     * 91%): the notice, besides the eviction and headroom alarms */
    al = step(&st, redis(R_OOM_BEFORE), T0 + SEC(25));
    ck_assert_str_eq(kinds(al), "EVICTION,POLICY_OK,HEADROOM");
    a = only(al, RSP_ALARM_POLICY_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "maxmemory-policy noeviction");
    /* and said once */
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(30)),
                           RSP_ALARM_POLICY_OK), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: eviction, loss, refusals                          */

START_TEST(test_step_eviction_redis)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0, t2 = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), t1)), "POLICY");
    /* filled until allkeys-lru evicted 1840 keys (and memory is full) */
    al = step(&st, redis(R_EVICTED), t2);
    ck_assert_str_eq(kinds(al), "EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "1840 claims may have been evicted");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(t1), " and ",
                                       fmt(t2), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "claimed before ", fmt(t2),
                                       NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));
    ck_assert_str_eq(fmt(t2 + SEC(WINDOW_S)), "2026-11-30T11:00:05Z");
    /* no more evictions: nothing */
    ck_assert_str_eq(kinds(step(&st, redis(R_EVICTED), T0 + SEC(10))), "");
}
END_TEST

START_TEST(test_step_eviction_memcache)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0 + SEC(60), t2 = T0 + SEC(65);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), t1)),
                     "POLICY");
    al = step(&st, mc(MC_EVICTED, MC_SET_DEFAULT), t2);
    ck_assert_str_eq(kinds(al), "EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "4230 claims may have been evicted");
    ck_assert_has(a->text, fmt(t1));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));

    /* the slab mover's evictions count too */
    memset(&st, 0, sizeof(st));
    step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), t1);
    al = step(&st, mc(edit(MC_EVICTED, "\nslab_reassign_evictions_nomem 0\n",
                           "\nslab_reassign_evictions_nomem 7\n"),
                      MC_SET_DEFAULT), t2);
    ck_assert_has(only(al, RSP_ALARM_EVICTION)->text,
                  "4237 claims may have been evicted");
}
END_TEST

START_TEST(test_step_restart_redis)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(30);
    apr_time_t at = t2 - SEC(1); /* R_RESTARTED_LIMIT: uptime 1 s */

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    al = step(&st, redis(R_RESTARTED_LIMIT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, RUN_ID_B);
    ck_assert_has(a->text, RUN_ID_A);
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "before ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(at + SEC(WINDOW_S)), NULL));
    ck_assert_str_eq(fmt(at), "2026-11-30T10:00:29Z");
    /* said once */
    ck_assert_str_eq(kinds(step(&st, redis(R_RESTARTED_LIMIT),
                                t2 + SEC(5))), "");
}
END_TEST

START_TEST(test_step_restart_memcache)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(20);
    apr_time_t at = t2 - SEC(3); /* MC_SAFE_RESTARTED: uptime 3 */

    memset(&st, 0, sizeof(st));
    step(&st, mc(MC_SAFE, MC_SET_SAFE), T0);
    ck_assert_str_eq(kinds(step(&st, mc(MC_FULL, MC_SET_SAFE), T0 + SEC(5))),
                     "REFUSALS,HEADROOM");
    /* restarted: new pid; its counters are lower too, one LOSS only */
    al = step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE), t2);
    ck_assert_str_eq(kinds(al), "LOSS,HEADROOM_OK");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "2940");
    ck_assert_has(a->text, "2853");
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(at + SEC(WINDOW_S)), NULL));
}
END_TEST

START_TEST(test_step_uptime_backwards)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(10);

    /* the same run_id, uptime 6 then 2 (two real INFOs of one Redis, fed
     * in reverse order); counters not lower (activity 1 -> 3) */
    memset(&st, 0, sizeof(st));
    step(&st, redis(R_RESETSTAT), T0);
    al = step(&st, redis(R_LIMIT), t2);
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(t2 - SEC(2)),
                                       NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 - SEC(2) + SEC(WINDOW_S)),
                                       NULL));
    ck_assert_int_eq(count(al, RSP_ALARM_EVICTION), 0);
}
END_TEST

START_TEST(test_step_resetstat)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0 + SEC(5), t2 = T0 + SEC(10);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM), t1)), "HEADROOM");
    /* CONFIG RESETSTAT: evicted_keys 1840 -> 0, errorstat_OOM 209 -> gone,
     * total_commands_processed 2108 -> 1; same run_id, uptime 6 */
    al = step(&st, redis(R_RESETSTAT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "reset");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(t1), " and ",
                                       fmt(t2), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));

    /* memcached stats reset: evictions 4230 -> 0, total_connections 6 -> 1 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_EVICTED, MC_SET_DEFAULT), t1)),
                     "POLICY,HEADROOM");
    al = step(&st, mc(MC_RESET, MC_SET_DEFAULT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");
}
END_TEST

START_TEST(test_step_reset_without_evictions)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    rsp_health_t before = redis(R_QUIET), after = redis(R_QUIET_RESET);

    /* nothing evicted or refused yet: only the activity counter tells
     * (total_commands_processed 22 -> 1) */
    ck_assert_int_eq(before.evictions, 0);
    ck_assert_int_eq(after.evictions, 0);
    ck_assert_int_eq(before.refusals, 0);
    ck_assert_int_eq(after.refusals, 0);
    ck_assert_int_eq(before.activity, 22);
    ck_assert_int_eq(after.activity, 1);
    ck_assert_str_eq(before.instance, after.instance);
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, before, T0)), "");
    al = step(&st, after, T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");

    /* memcached stats reset: total_connections 4 -> 1 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_QUIET, MC_SET_SAFE), T0)), "");
    al = step(&st, mc(MC_QUIET_RESET, MC_SET_SAFE), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");
}
END_TEST

START_TEST(test_step_refusals_first_seen)
{
    rsp_monitor_state_t st;
    /* the poll before reported no Errorstats section (refusals unknown):
     * a count seen for the first time is no increase (it would be
     * reported as 209 - (-1) = 210) */
    const char *no_errorstats = apr_pstrndup(
        pool, R_OOM_BEFORE,
        (apr_size_t)(strstr(R_OOM_BEFORE, "# Replication") - R_OOM_BEFORE));

    memset(&st, 0, sizeof(st));
    step(&st, redis(no_errorstats), T0);
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(5)),
                           RSP_ALARM_REFUSALS), 0);
}
END_TEST

START_TEST(test_step_refusals)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0, t2 = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM_BEFORE), t1)), "HEADROOM");
    /* 300 SETs under noeviction, 209 refused with OOM */
    al = step(&st, redis(R_OOM), t2);
    ck_assert_str_eq(kinds(al), "REFUSALS");
    a = only(al, RSP_ALARM_REFUSALS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "209 writes refused");
    ck_assert_has(a->text, fmt(t1));
    ck_assert_has(a->text, fmt(t2));
    ck_assert_has(a->text, "sign-ins are being refused");
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM), T0 + SEC(10))), "");

    /* memcached -M full: store_no_memory 0 -> 4230 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), t1)), "");
    al = step(&st, mc(MC_FULL, MC_SET_SAFE), t2);
    ck_assert_str_eq(kinds(al), "REFUSALS,HEADROOM");
    ck_assert_has(only(al, RSP_ALARM_REFUSALS)->text, "4230 writes refused");
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: headroom, reachability, role                      */

START_TEST(test_step_headroom)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    /* 990960 of 10485760 bytes: 9% */
    ck_assert_int_eq(count(step(&st, redis(R_LIMIT), T0),
                           RSP_ALARM_HEADROOM), 0);
    /* 1040304 of 1138696: 91% */
    al = step(&st, redis(R_OOM_BEFORE), T0 + SEC(5));
    a = only(al, RSP_ALARM_HEADROOM);
    ck_assert_int_eq(a->level, RSP_LOG_WARNING);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "91%");
    ck_assert_has(a->text, "1040304 of 1138696 bytes");
    ck_assert_has(a->text, "warning at 80%");
    /* 100%, then 91%: still above, nothing */
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(10)),
                           RSP_ALARM_HEADROOM), 0);
    al = step(&st, redis(R_RESETSTAT), T0 + SEC(15));
    ck_assert_int_eq(count(al, RSP_ALARM_HEADROOM), 0);
    ck_assert_int_eq(count(al, RSP_ALARM_HEADROOM_OK), 0);
    /* 1040304 of 10485760: 9%, back under */
    al = step(&st, redis(R_PRIMARY), T0 + SEC(20));
    ck_assert_str_eq(kinds(al), "HEADROOM_OK");
    a = only(al, RSP_ALARM_HEADROOM_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "80%");
    ck_assert_str_eq(kinds(step(&st, redis(R_PRIMARY), T0 + SEC(25))), "");

    /* no limit (maxmemory 0): no headroom to speak of */
    memset(&st, 0, sizeof(st));
    ck_assert_int_eq(count(step(&st, redis(R_DEFAULT), T0),
                           RSP_ALARM_HEADROOM), 0);
}
END_TEST

START_TEST(test_step_headroom_threshold)
{
    rsp_monitor_state_t st;
    rsp_monitor_params_t mp = params;
    apr_array_header_t *al = apr_array_make(pool, 4, sizeof(rsp_alarm_t));
    rsp_health_t h = redis(R_OOM_BEFORE); /* 91.36% */

    h.polled = T0;
    mp.headroom_warn_pct = 91; /* at the threshold: warned */
    memset(&st, 0, sizeof(st));
    rsp_monitor_step(&st, &h, &mp, pool, al);
    ck_assert_str_eq(kinds(al), "HEADROOM");
    ck_assert_has(only(al, RSP_ALARM_HEADROOM)->text, "warning at 91%");

    mp.headroom_warn_pct = 92; /* under it: not */
    apr_array_clear(al);
    memset(&st, 0, sizeof(st));
    rsp_monitor_step(&st, &h, &mp, pool, al);
    ck_assert_str_eq(kinds(al), "");
}
END_TEST

START_TEST(test_step_unreachable)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    rsp_health_t gone;
    const char *err = "Connection refused";
    apr_time_t t_down = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0)), "POLICY");

    /* down: one error */
    al = step(&st, down(REDIS_NAME, err), t_down);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    a = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, err);

    /* down again within unreachable_repeat: nothing; and while down no
     * other kind, even when the health carries numbers that would raise
     * one (an evicting policy, evictions, full memory) */
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err), t_down + SEC(5))),
                     "");
    gone = redis(R_EVICTED);
    gone.reachable = 0;
    apr_cpystrn(gone.error, err, sizeof(gone.error));
    ck_assert_str_eq(kinds(step(&st, gone, t_down + SEC(10))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(299))), "");

    /* after the repeat interval: one more */
    al = step(&st, down(REDIS_NAME, err), t_down + SEC(300));
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    a = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "still unreachable");
    ck_assert_has(a->text, apr_pstrcat(pool, "since ", fmt(t_down), NULL));
    ck_assert_has(a->text, "5m00s");
    ck_assert_has(a->text, err);
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(305))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(599))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(600))), "UNREACHABLE");

    /* up after 1h01m40s, having evicted meanwhile: the notice with the
     * outage's length, and the evictions counted from the last poll that
     * reached it (T0), not from the outage */
    al = step(&st, redis(R_EVICTED), t_down + SEC(3700));
    ck_assert_str_eq(kinds(al), "REACHABLE,EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_REACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "after 1h01m40s");
    ck_assert_has(a->text, fmt(t_down));
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_has(a->text, "1840 claims");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(T0), " and ",
                                       fmt(t_down + SEC(3700)), NULL));

    /* up stays up; a new outage is said at once */
    ck_assert_str_eq(kinds(step(&st, redis(R_EVICTED),
                                t_down + SEC(3705))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(3710))), "UNREACHABLE");
    al = step(&st, redis(R_EVICTED), t_down + SEC(3740));
    ck_assert_str_eq(kinds(al), "REACHABLE");
    ck_assert_has(only(al, RSP_ALARM_REACHABLE)->text, "after 30s");
}
END_TEST

START_TEST(test_step_unreachable_first_poll)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;

    /* never reached yet: the error, then on first contact the notice and
     * the policy alarm of a first poll */
    memset(&st, 0, sizeof(st));
    al = step(&st, down(MC_NAME, "Connection refused"), T0);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    al = step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0 + SEC(125));
    ck_assert_str_eq(kinds(al), "REACHABLE,POLICY");
    ck_assert_has(only(al, RSP_ALARM_REACHABLE)->text, "after 2m05s");
}
END_TEST

START_TEST(test_step_one_server_down)
{
    /* each memcached server has its own state: the one that answers is
     * judged, the one that does not raises one UNREACHABLE */
    rsp_monitor_state_t st[2];
    apr_array_header_t *a = mc_all(MC_HALF, MC_SET_HALF, 2), *al;
    const rsp_alarm_t *u;

    memset(st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st[0], *MC_IDX(a, 0), T0)), "");
    al = step(&st[1], *MC_IDX(a, 1), T0);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    u = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_has(u->text, "127.0.0.1:17212");
    ck_assert_has(u->text, HALF_ERROR);
    ck_assert_str_eq(kinds(step(&st[0], *MC_IDX(a, 0), T0 + SEC(5))), "");
    ck_assert_str_eq(kinds(step(&st[1], *MC_IDX(a, 1), T0 + SEC(5))), "");
}
END_TEST

START_TEST(test_step_role)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    /* REPLICAOF: role:slave */
    al = step(&st, redis(R_REPLICA), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "ROLE");
    a = only(al, RSP_ALARM_ROLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "replica");
    ck_assert_str_eq(kinds(step(&st, redis(R_REPLICA), T0 + SEC(10))), "");
    /* REPLICAOF NO ONE */
    al = step(&st, redis(R_PRIMARY), T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "ROLE_OK");
    a = only(al, RSP_ALARM_ROLE_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_str_eq(kinds(step(&st, redis(R_PRIMARY), T0 + SEC(20))), "");

    /* a replica at the first poll */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_REPLICA), T0)), "ROLE");
}
END_TEST

/* R_LIMIT (a primary) with its replication section's replicas: lines
 * as Redis 7.0 writes them ("slaveN:ip=...,port=...,state=...,offset=...,
 * lag=..."). */
static const char *with_replicas(int connected, const char *lines)
{
    const char *at = strstr(R_LIMIT, "connected_slaves:0\r\n");

    ck_assert_ptr_nonnull(at);
    return apr_psprintf(pool, "%.*sconnected_slaves:%d\r\n%s%s",
                        (int)(at - R_LIMIT), R_LIMIT, connected, lines,
                        at + strlen("connected_slaves:0\r\n"));
}

#define REPL_OK0 "slave0:ip=127.0.0.1,port=6380,state=online,offset=4242,lag=0\r\n"
#define REPL_OK1 "slave1:ip=127.0.0.1,port=6381,state=online,offset=4242,lag=1\r\n"
#define REPL_LAG1 "slave1:ip=127.0.0.1,port=6381,state=online,offset=4000,lag=7\r\n"
#define REPL_SYNC1 "slave1:ip=127.0.0.1,port=6381,state=wait_bgsave,offset=0,lag=0\r\n"

START_TEST(test_redis_replicas_in_step)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_OK1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 2);
    ck_assert_int_eq(h.replicas_in_step, 2);
    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_LAG1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 2);
    ck_assert_int_eq(h.replicas_in_step, 1);        /* 7 s behind */
    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_SYNC1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas_in_step, 1);        /* still syncing */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 0);
    ck_assert_int_eq(h.replicas_in_step, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_REPLICA), APR_SUCCESS);
    ck_assert_int_eq(h.replicas_in_step, 0);
}
END_TEST

/* ReplaySPStoreReplicas 1: the error before sign-ins are refused is the
 * warning that there is no spare; the error when they are. */
START_TEST(test_step_replicas)
{
    rsp_monitor_params_t mp = params;
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    mp.replicas_required = 1;
#define STEP(info, t) ({ al = apr_array_make(pool, 4, sizeof(rsp_alarm_t)); \
        rsp_health_t h_ = redis(info); h_.polled = (t);                          \
        rsp_monitor_step(&st, &h_, &mp, pool, al); al; })
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0)), "");
    /* one lags: just enough left */
    al = STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(5));
    a = only(al, RSP_ALARM_REPLICAS_THIN);
    ck_assert_int_eq(a->level, RSP_LOG_WARNING);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "if one more drops out, sign-ins are refused");
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(10))), "");
    /* it is gone: still just enough, said once */
    ck_assert_str_eq(kinds(STEP(with_replicas(1, REPL_OK0), T0 + SEC(15))), "");
    /* none: refused */
    al = STEP(R_LIMIT, T0 + SEC(20));
    a = only(al, RSP_ALARM_REPLICAS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "0 replica(s) in step");
    ck_assert_has(a->text, "asks for 1");
    ck_assert_has(a->text, "sign-ins are refused");
    ck_assert_str_eq(kinds(STEP(R_LIMIT, T0 + SEC(25))), "");
    /* back */
    al = STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0 + SEC(30));
    a = only(al, RSP_ALARM_REPLICAS_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0 + SEC(35))), "");
    /* one replica asked for and one there, from the first poll: no spare,
     * but nothing lost either: quiet */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(STEP(with_replicas(1, REPL_OK0), T0)), "");
    /* not asked for: never */
    memset(&st, 0, sizeof(st));
    mp.replicas_required = 0;
    ck_assert_str_eq(kinds(STEP(R_LIMIT, T0)), "");
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(5))), "");
    /* a replica itself (role:slave) is the role alarm's business */
    memset(&st, 0, sizeof(st));
    mp.replicas_required = 1;
    ck_assert_str_eq(kinds(STEP(R_REPLICA, T0)), "ROLE");
#undef STEP
}
END_TEST

/* Sentinel moved the master: one error naming both masters and the
 * blast radius, instead of a "restarted" loss (another run_id is expected
 * of another server). */
START_TEST(test_step_failover)
{
    rsp_monitor_state_t st;
    rsp_monitor_params_t mp = params;
    rsp_health_t h;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    h = redis(R_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6379", sizeof(h.primary));
    ck_assert_str_eq(kinds(step(&st, h, T0)), "");
    ck_assert_str_eq(kinds(step(&st, h, T0 + SEC(5))), "");
    /* the master killed: a poll fails, then the new master answers */
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, "connection refused"),
                                T0 + SEC(10))), "UNREACHABLE");
    h = redis(R_RESTARTED_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6380", sizeof(h.primary));
    al = step(&st, h, T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "REACHABLE,FAILOVER");
    a = only(al, RSP_ALARM_FAILOVER);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "the master is now 127.0.0.1:6380 (was 127.0.0.1:6379");
    ck_assert_has(a->text, "may be accepted again until");
    ck_assert_has(a->text, "replication is asynchronous");
    ck_assert_str_eq(kinds(step(&st, h, T0 + SEC(20))), "");
    /* with acknowledged claims the radius is what was refused */
    mp.replicas_required = 1;
    h = redis(R_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6379", sizeof(h.primary));
    al = apr_array_make(pool, 4, sizeof(rsp_alarm_t));
    h.polled = T0 + SEC(25);
    rsp_monitor_step(&st, &h, &mp, pool, al);
    a = only(al, RSP_ALARM_FAILOVER);
    ck_assert_has(a->text, "with ReplaySPStoreReplicas 1, only claims that "
                  "were refused");
    /* not under Sentinel: another run_id is a restart, as before */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    ck_assert_str_eq(kinds(step(&st, redis(R_RESTARTED_LIMIT), T0 + SEC(5))),
                     "LOSS");
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: whole captured lives, poll by poll                */

START_TEST(test_step_redis_life)
{
    /* every Redis INFO in the order it was captured, one poll each */
    static const struct {
        const char *info, *expect;
    } polls[] = {
        { R_DEFAULT, "POLICY" },                    /* no maxmemory */
        { R_LIMIT, "POLICY_OK" },                   /* maxmemory 10mb */
        { R_ALLKEYS, "POLICY" },
        { R_VOLATILE, "POLICY" },
        { R_EVICTED, "EVICTION,POLICY,HEADROOM" },  /* allkeys-lru again */
        { R_OOM_BEFORE, "POLICY_OK" },              /* still 91% */
        { R_OOM, "REFUSALS" },
        { R_RESETSTAT, "LOSS" },
        { R_REPLICA, "HEADROOM_OK,ROLE" },
        { R_PRIMARY, "ROLE_OK" },
        { R_RESTARTED, "LOSS,POLICY" },             /* no maxmemory again */
        { R_RESTARTED_LIMIT, "POLICY_OK" },
    };
    rsp_monitor_state_t st;
    unsigned i;

    memset(&st, 0, sizeof(st));
    for (i = 0; i < sizeof(polls) / sizeof(polls[0]); i++) {
        const char *got = kinds(step(&st, redis(polls[i].info),
                                     T0 + SEC(5 * i)));
        ck_assert_msg(!strcmp(got, polls[i].expect),
                      "poll %u: [%s], expected [%s]", i, got, polls[i].expect);
    }
}
END_TEST

START_TEST(test_step_memcache_lives)
{
    rsp_monitor_state_t st;

    /* memcached -m 2: filled until it evicted, then stats reset */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0)),
                     "POLICY");
    ck_assert_str_eq(kinds(step(&st, mc(MC_EVICTED, MC_SET_DEFAULT),
                                T0 + SEC(5))), "EVICTION,HEADROOM");
    ck_assert_str_eq(kinds(step(&st, mc(MC_RESET, MC_SET_DEFAULT),
                                T0 + SEC(10))), "LOSS");

    /* memcached -M -o no_slab_reassign -m 2: filled until it refused,
     * then restarted */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), T0)), "");
    ck_assert_str_eq(kinds(step(&st, mc(MC_FULL, MC_SET_SAFE), T0 + SEC(5))),
                     "REFUSALS,HEADROOM");
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE),
                                T0 + SEC(10))), "LOSS,HEADROOM_OK");
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE),
                                T0 + SEC(15))), "");
}
END_TEST

/* Redis Cluster: one block per master, named by its shard's slots, its
 * address the primary; a master that did not answer is unreachable; a
 * shard whose master changes between polls raises FAILOVER. */
START_TEST(test_parse_cluster)
{
    const char *text = apr_pstrcat(pool,
        "# rsp-node redis+cluster://a:1 slots 0-5460 127.0.0.1:7000\r\n",
        R_LIMIT, "\r\n",
        "# rsp-node redis+cluster://a:1 slots 5461-10922 127.0.0.1:7001\r\n",
        "error redis+cluster://a:1 (node 127.0.0.1:7001): connection refused\r\n",
        "# rsp-node redis+cluster://a:1 slots 10923-16383 127.0.0.1:7002\r\n",
        R_DEFAULT, "\r\n", NULL);
    const char *moved = apr_pstrcat(pool,
        "# rsp-node redis+cluster://a:1 slots 0-5460 127.0.0.1:7003\r\n",
        R_RESTARTED_LIMIT, "\r\n", NULL);
    apr_array_header_t *out = NULL, *later = NULL, *al;
    rsp_health_t *h;
    rsp_monitor_state_t st;

    ck_assert_int_eq(rsp_health_parse_cluster(&out, pool, text), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 3);
    h = &APR_ARRAY_IDX(out, 0, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 0-5460");
    ck_assert_str_eq(h->primary, "127.0.0.1:7000");
    ck_assert_int_eq(h->reachable, 1);
    ck_assert_str_eq(h->instance, RUN_ID_A);
    h = &APR_ARRAY_IDX(out, 1, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 5461-10922");
    ck_assert_int_eq(h->reachable, 0);
    ck_assert_has(h->error, "connection refused");
    h = &APR_ARRAY_IDX(out, 2, rsp_health_t);
    ck_assert_str_eq(h->primary, "127.0.0.1:7002");
    ck_assert_int_eq(h->reachable, 1);
    /* the first shard's replica promoted */
    memset(&st, 0, sizeof(st));
    h = &APR_ARRAY_IDX(out, 0, rsp_health_t);
    ck_assert_str_eq(kinds(step(&st, *h, T0)), "");
    ck_assert_int_eq(rsp_health_parse_cluster(&later, pool, moved), APR_SUCCESS);
    h = &APR_ARRAY_IDX(later, 0, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 0-5460");
    al = step(&st, *h, T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "FAILOVER");
    ck_assert_has(only(al, RSP_ALARM_FAILOVER)->text,
                  "the master is now 127.0.0.1:7003 (was 127.0.0.1:7000");
    /* not blocks */
    ck_assert_int_ne(rsp_health_parse_cluster(&out, pool, R_LIMIT), APR_SUCCESS);
    ck_assert_int_ne(rsp_health_parse_cluster(&out, pool,
                                              "# rsp-node noaddress\r\n"),
                     APR_SUCCESS);
}
END_TEST

static Suite *monitor_suite(void)
{
    Suite *s = suite_create("rsp_monitor");
    TCase *tc;

    tc = tcase_create("parse_redis");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_redis_default);
    tcase_add_test(tc, test_parse_cluster);
    tcase_add_test(tc, test_redis_noeviction_with_limit);
    tcase_add_test(tc, test_redis_evicting_policies);
    tcase_add_test(tc, test_redis_evicted);
    tcase_add_test(tc, test_redis_oom_refusals);
    tcase_add_test(tc, test_redis_resetstat);
    tcase_add_test(tc, test_redis_restarted);
    tcase_add_test(tc, test_redis_replica);
    tcase_add_test(tc, test_redis_without_config);
    tcase_add_test(tc, test_redis_without_errorstats);
    tcase_add_test(tc, test_redis_lf_line_ends);
    tcase_add_test(tc, test_redis_rejects);
    tcase_add_test(tc, test_redis_rejects_bad_numbers);
    tcase_add_test(tc, test_rejects_huge_numbers);
    suite_add_tcase(s, tc);

    tc = tcase_create("parse_memcache");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_mc_one_server);
    tcase_add_test(tc, test_mc_evictions_include_slab_mover);
    tcase_add_test(tc, test_mc_refusals);
    tcase_add_test(tc, test_mc_safe_settings);
    tcase_add_test(tc, test_mc_settings_without_M);
    tcase_add_test(tc, test_mc_settings_slab_reassign);
    tcase_add_test(tc, test_mc_two_servers);
    tcase_add_test(tc, test_mc_settings_go_to_their_server);
    tcase_add_test(tc, test_mc_settings_of_unknown_server_ignored);
    tcase_add_test(tc, test_mc_server_down);
    tcase_add_test(tc, test_mc_rejects);
    suite_add_tcase(s, tc);

    tc = tcase_create("step");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_step_policy_first_poll);
    tcase_add_test(tc, test_step_policy_changes);
    tcase_add_test(tc, test_step_eviction_redis);
    tcase_add_test(tc, test_step_eviction_memcache);
    tcase_add_test(tc, test_step_restart_redis);
    tcase_add_test(tc, test_step_restart_memcache);
    tcase_add_test(tc, test_step_uptime_backwards);
    tcase_add_test(tc, test_step_resetstat);
    tcase_add_test(tc, test_step_reset_without_evictions);
    tcase_add_test(tc, test_step_refusals);
    tcase_add_test(tc, test_step_refusals_first_seen);
    tcase_add_test(tc, test_step_headroom);
    tcase_add_test(tc, test_step_headroom_threshold);
    tcase_add_test(tc, test_step_unreachable);
    tcase_add_test(tc, test_step_unreachable_first_poll);
    tcase_add_test(tc, test_step_one_server_down);
    tcase_add_test(tc, test_step_role);
    tcase_add_test(tc, test_step_uptime_beyond_epoch);
    tcase_add_test(tc, test_step_failover);
    tcase_add_test(tc, test_step_replicas);
    tcase_add_test(tc, test_redis_replicas_in_step);
    tcase_add_test(tc, test_step_redis_life);
    tcase_add_test(tc, test_step_memcache_lives);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(monitor_suite());
}
