/*
 * Cross-language vectors: the C side. Built against the generated km_abi.h, it reads
 * one request per line on stdin and answers one line per request on stdout:
 *
 *   pack SEQ HANDLER FLAGS SLOT FIRST COUNT A0 .. A9  -> 128 hex digits (the 64 bytes)
 *   unpack HEX128                                     -> LANDED SEQ HANDLER FLAGS SLOT FIRST COUNT A0 .. A9
 *   gave WORD SEQ                                     -> CODE WHERE SLOT PORT SEQ
 *   state W0 .. W47                                   -> the named state words, decoded
 *   limit CYCLES                                      -> KM_LIMIT_CYCLES (sanity)
 */
#include <stdio.h>
#include <string.h>

#include "komorebi/abi/km_abi.h"

static void put_bytes(const km_command_t* command) {
    /* Serialise word by word, little-endian, whatever the host's byte order. */
    const uint32_t* words = (const uint32_t*)(const void*)command;
    size_t i;
    for (i = 0; i < sizeof(*command) / 4u; i++) {
        uint32_t w = words[i];
        printf("%02x%02x%02x%02x", (unsigned)(w & 0xFFu), (unsigned)((w >> 8) & 0xFFu),
               (unsigned)((w >> 16) & 0xFFu), (unsigned)((w >> 24) & 0xFFu));
    }
    printf("\n");
}

static int get_bytes(const char* hex, km_command_t* command) {
    uint32_t* words = (uint32_t*)(void*)command;
    size_t i;
    if (strlen(hex) != 2u * sizeof(*command)) {
        return 0;
    }
    for (i = 0; i < sizeof(*command) / 4u; i++) {
        unsigned b[4];
        if (sscanf(hex + 8 * i, "%2x%2x%2x%2x", &b[0], &b[1], &b[2], &b[3]) != 4) {
            return 0;
        }
        words[i] = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
                   ((uint32_t)b[3] << 24);
    }
    return 1;
}

static void put_gave(uint32_t word, uint32_t sequence) {
    printf("%u %u %u %u %u", (unsigned)km_gave_up_code(word), (unsigned)km_gave_up_where(word),
           (unsigned)km_gave_up_slot(word), (unsigned)km_gave_up_port(word), (unsigned)sequence);
}

int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin) != NULL) {
        char op[16];
        int used = 0;
        if (sscanf(line, "%15s%n", op, &used) != 1) {
            continue;
        }
        if (strcmp(op, "pack") == 0) {
            unsigned long v[16];
            km_command_t command;
            uint32_t i;
            if (sscanf(line + used,
                       "%lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu", &v[0],
                       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
                       &v[11], &v[12], &v[13], &v[14], &v[15]) != 16) {
                printf("error\n");
                continue;
            }
            memset(&command, 0, sizeof command);
            command.sequence = (uint32_t)v[0];
            command.land1 = command.sequence;
            command.land2 = command.sequence;
            command.land3 = command.sequence;
            command.hdr = km_hdr_pack((uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3]);
            command.group = km_group_pack((uint32_t)v[4], (uint32_t)v[5]);
            for (i = 0; i < KM_COMMAND_ARGS; i++) {
                km_command_set_args(&command, i, (uint32_t)v[6 + i]);
            }
            put_bytes(&command);
        } else if (strcmp(op, "unpack") == 0) {
            char hex[256];
            km_command_t command;
            uint32_t i;
            if (sscanf(line + used, "%255s", hex) != 1 || !get_bytes(hex, &command)) {
                printf("error\n");
                continue;
            }
            printf("%d %u %u %u %u %u %u", KM_LANDED(&command) ? 1 : 0, (unsigned)command.sequence,
                   (unsigned)km_hdr_handler(command.hdr), (unsigned)km_hdr_flags(command.hdr),
                   (unsigned)km_hdr_slot(command.hdr), (unsigned)km_group_first(command.group),
                   (unsigned)km_group_count(command.group));
            for (i = 0; i < KM_COMMAND_ARGS; i++) {
                printf(" %u", (unsigned)km_command_args(&command, i));
            }
            printf("\n");
        } else if (strcmp(op, "gave") == 0) {
            unsigned long word, sequence;
            if (sscanf(line + used, "%lu %lu", &word, &sequence) != 2) {
                printf("error\n");
                continue;
            }
            put_gave((uint32_t)word, (uint32_t)sequence);
            printf("\n");
        } else if (strcmp(op, "state") == 0) {
            uint32_t st[KM_ST_WORDS];
            const char* p = line + used;
            uint32_t i;
            int n = 0;
            for (i = 0; i < KM_ST_WORDS; i++) {
                unsigned long v;
                if (sscanf(p, "%lu%n", &v, &n) != 1) {
                    break;
                }
                st[i] = (uint32_t)v;
                p += n;
            }
            if (i != KM_ST_WORDS) {
                printf("error\n");
                continue;
            }
            printf("last");
            for (i = 0; i < KM_CONTROL_RING_SLOTS; i++) {
                printf(" %u", (unsigned)st[KM_ST_LAST + i]);
            }
            printf(" reported");
            for (i = 0; i < KM_CONTROL_RING_SLOTS; i++) {
                printf(" %u", (unsigned)st[KM_ST_REPORTED + i]);
            }
            printf(" reader ");
            put_gave(st[KM_ST_READER], st[KM_ST_READER + 1]);
            printf(" writer ");
            put_gave(st[KM_ST_WRITER], st[KM_ST_WRITER + 1]);
            printf(" compute ");
            put_gave(st[KM_ST_COMPUTE], st[KM_ST_COMPUTE + 1]);
            printf(" runs %u passes %u next_cycles %u completed %u seen %u wrong %u",
                   (unsigned)st[KM_ST_RUNS], (unsigned)st[KM_ST_PASSES],
                   (unsigned)st[KM_ST_NEXT_CYCLES], (unsigned)st[KM_ST_COMPLETED],
                   (unsigned)st[KM_ST_SEEN], (unsigned)st[KM_ST_WRONG]);
            printf(" ends %u %u %u", (unsigned)km_ends_reader(st[KM_ST_ENDS]),
                   (unsigned)km_ends_writer(st[KM_ST_ENDS]),
                   (unsigned)km_ends_compute(st[KM_ST_ENDS]));
            printf(" magic %u %u %u", (unsigned)(st[KM_ST_MAGIC] >> KM_MAGIC_MARKER_SHIFT),
                   (unsigned)km_magic_tag(st[KM_ST_MAGIC]), (unsigned)km_magic_me(st[KM_ST_MAGIC]));
            printf(" slot_wrong %u trace_dropped %u\n", (unsigned)st[KM_ST_SLOT_WRONG],
                   (unsigned)st[KM_ST_TRACE_DROPPED]);
        } else {
            printf("error\n");
        }
        fflush(stdout);
    }
    return 0;
}
