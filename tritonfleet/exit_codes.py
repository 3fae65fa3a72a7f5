"""The exit statuses of every `tritonfleet` command (the README's table), in one place for all the CLI modules."""

EXIT_OK, EXIT_USER_ERROR, EXIT_POLICY_VIOLATION = 0, 1, 2
EXIT_USAGE = 64  # sysexits.h EX_USAGE; Click's own default for usage errors (2) is a policy violation here
EXIT_CODES_HELP = (
    "Exit status: 0 ok; 1 a user error (bad config, unknown stack, a program error), with a message and no traceback; "
    "2 a mandatory policy violation; 64 a usage error (a missing or unknown option)."
)
