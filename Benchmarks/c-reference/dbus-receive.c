/* Reference receiver: plain C on libdbus, the yardstick for the Swift layer's
 * CPU per PropertiesChanged signal. Usage: dbus-receive ADDRESS COUNT
 * Built and run by scripts/bench-dbus.sh; not part of blegate. */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static long received, target;
static double start_cpu, start_wall;

static double cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static DBusHandlerResult filter(DBusConnection *c, DBusMessage *m, void *data) {
    (void)c; (void)data;
    if (!dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged"))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessageIter it, dict, entry, var, arr;
    if (!dbus_message_iter_init(m, &it)) return DBUS_HANDLER_RESULT_HANDLED;
    dbus_message_iter_next(&it);
    dbus_message_iter_recurse(&it, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &var);
        if (dbus_message_iter_get_arg_type(&var) == DBUS_TYPE_ARRAY) {
            const unsigned char *bytes;
            int n;
            dbus_message_iter_recurse(&var, &arr);
            dbus_message_iter_get_fixed_array(&arr, &bytes, &n);
            if (received == 0) { start_cpu = cpu(); start_wall = wall(); }
            received++;
        }
        dbus_message_iter_next(&dict);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    target = atol(argv[2]);
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(argv[1], &err);
    if (!c || !dbus_bus_register(c, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    dbus_bus_add_match(c, "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d'", &err);
    dbus_connection_add_filter(c, filter, NULL, NULL);
    printf("ready\n");
    fflush(stdout);
    double last = wall();
    long seen = 0;
    while (received < target) {
        dbus_connection_read_write_dispatch(c, 500);
        if (received != seen) { seen = received; last = wall(); }
        else if (received > 0 && wall() - last > 3) break;
    }
    double cpu_used = cpu() - start_cpu, wall_used = wall() - start_wall;
    printf("dbus receive, plain C libdbus: %ld of %ld signals, lost %ld, %.0f signals/s, CPU %.2f µs/signal (receiver process)\n",
           received, target, target - received, received / wall_used, cpu_used / received * 1e6);
    return 0;
}
