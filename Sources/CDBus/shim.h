#ifndef BLEGATE_CDBUS_SHIM_H
#define BLEGATE_CDBUS_SHIM_H

// libdbus spells its type codes as macros such as ((int) 's'), which Swift cannot
// import, and a few of its entry points are variadic. This header turns the former
// into constants and wraps the latter, so that the Swift D-Bus layer needs no C of its own.

#include <dbus/dbus.h>

static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

static const unsigned int CDBUS_WATCH_READABLE = DBUS_WATCH_READABLE;
static const unsigned int CDBUS_WATCH_WRITABLE = DBUS_WATCH_WRITABLE;
static const unsigned int CDBUS_WATCH_ERROR = DBUS_WATCH_ERROR;
static const unsigned int CDBUS_WATCH_HANGUP = DBUS_WATCH_HANGUP;

static const int CDBUS_MAXIMUM_ARRAY_LENGTH = DBUS_MAXIMUM_ARRAY_LENGTH;

#include <stdlib.h>
#include <string.h>

static inline void cdbus_take_error(DBusError *err, char **error_name, char **error_message) {
    *error_name = strdup(err->name ? err->name : DBUS_ERROR_FAILED);
    *error_message = strdup(err->message ? err->message : "");
    dbus_error_free(err);
}

/// `DBusError` is a struct with bit-fields; keeping it on the C side spares Swift
/// its layout. Returns NULL and fills the two out-strings (free them with `free`)
/// when opening fails.
static inline DBusConnection *cdbus_open_private(const char *address, char **error_name, char **error_message) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(address, &err);
    if (c == NULL) cdbus_take_error(&err, error_name, error_message);
    return c;
}

/// `dbus_bus_register` (the Hello call) with its error flattened as above. Returns 1 on success.
static inline int cdbus_bus_register(DBusConnection *connection, char **error_name, char **error_message) {
    DBusError err;
    dbus_error_init(&err);
    if (dbus_bus_register(connection, &err)) return 1;
    cdbus_take_error(&err, error_name, error_message);
    return 0;
}

/// Wraps the variadic `dbus_message_get_args` for bodies of three strings
/// (NameOwnerChanged). Returns 1 on success; the strings belong to the message.
static inline int cdbus_message_get_three_strings(DBusMessage *message, const char **a, const char **b, const char **c) {
    DBusError err;
    dbus_error_init(&err);
    if (dbus_message_get_args(message, &err, DBUS_TYPE_STRING, a, DBUS_TYPE_STRING, b, DBUS_TYPE_STRING, c, DBUS_TYPE_INVALID)) return 1;
    dbus_error_free(&err);
    return 0;
}

/// Wraps the variadic `dbus_message_append_args` for a single string argument.
static inline int cdbus_message_append_string(DBusMessage *message, const char *value) {
    return dbus_message_append_args(message, DBUS_TYPE_STRING, &value, DBUS_TYPE_INVALID);
}

#endif
