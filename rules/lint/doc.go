// Package lint finds problems in Cloud Firestore and Cloud Storage Security
// Rules before they are deployed. It works on the shared AST (packages parser
// and check, whose compile diagnostics it takes from the service bindings
// rules/firestore and rules/storage) and reports positioned diagnostics
// (package source) with a fix when one exists. `pyric firestore rules lint`
// and `pyric storage rules lint` print them as text, JSON or SARIF.
//
// Codes, severities and thresholds (production's limits were measured
// against Google's engines; the bands below them are lint's):
//
//	SOURCE_SIZE                 error    source over 262144 bytes (256 KiB)
//	CHAIN_DEPTH                 warning  && / || chain of 85–94 operands (counted after flattening)
//	                            error    95–98 operands (approaching), 99+ (production rejects 99 comparisons)
//	NESTING_DEPTH               error    nesting deeper than 99 levels (package check)
//	LET_LIMIT                   error    more than 11 lets in a function
//	CALL_DEPTH                  warning  18–21 functions on one call stack; error from 22
//	GET_COUNT                   warning  5–10 distinct documents read by a rule (through helpers too);
//	                            error    more than 10 (Storage: more than 2, no warning band)
//	EXPRESSION_BUDGET           warning/error by user-function calls in the rule, calls expanded:
//	                                     0–2 calls 100/120 expressions, 3 calls 60/90, 4+ calls 40/60
//	SHARED_GATE                 warning  rules on one path, for a common method, with the same first condition
//	GET_DUPLICATION             warning  a helper that reads documents called twice with the same arguments
//	PERMISSIVE_RULE             warning  a write (create, update, delete) that is always true
//	RECURSIVE_WILDCARD_OPEN     error    an always-true rule under {x=**}
//	RECURSIVE_WILDCARD_READ     warning  a read under {x=**} that never checks request.auth
//	WRITE_WITHOUT_AUTH          warning  a write that never checks request.auth (through helpers too)
//	WRITE_UNVALIDATED           warning  a create/update that never reads request.resource(.data)
//	INVALID_OPERATOR            error    ===, !==, ?., ??, =>, template strings (the file does not parse)
//	INVALID_PATH_INTERPOLATION  error    {name} inside a path literal (the file does not parse)
//	HALLUCINATED_METHOD         error    includes(), map(), length(), math.max(), hasAll() on a map, …
//	HALLUCINATED_GLOBAL         error    Math, Date, JSON, undefined, …, and debug(), bool()
//	WRONG_CONTEXT_PATH          error    request.uid, resource.id, request.resource.data in Storage, auth, …
//	LENGTH_PROPERTY             error    .length on a string or list; warning on a field that may be a map
//	METHOD_MISSING_PARENS       warning  x.size, x.keys, … without ()
//	UNDEFINED_FUNCTION          error    a call to a function or method that does not exist
//	UNDEFINED_VARIABLE          error    a name that is not defined
//	REQUEST_TIME_NOT_PINNED     warning  a test case without requestTime reaching a rule that reads request.time
//	RULES_WEAKENED              warning  a match block, allow or top-level condition the previous ruleset had
//
// Production's other compile diagnostics pass through with their own codes
// (RECURSION, DUPLICATE_NAME, INVALID_REGEX, ARGUMENT_COUNT, UNKNOWN_METHOD,
// UNUSED, RULES_VERSION, SERVICE), and PARSE_ERROR for other syntax errors.
package lint
