// Package rtdb is the Realtime Database Security Rules engine: it compiles
// database.rules.json (the JSON rules tree and the JavaScript-like
// expressions in it), judges reads and writes with production's semantics,
// explains every decision, simulates test cases and lints rules.
//
// Semantics, each checked against verdicts recorded from production
// (internal/conformance, copied from shared/conformance/rules/rtdb.json):
//
//   - .read and .write grant top-down: the first rule on the path from the
//     root to the requested location that evaluates to true grants the
//     whole subtree, and a deeper rule can't revoke it. No grant is a deny,
//     including for a path no rule mentions.
//   - .validate does not cascade. After a write is granted, every .validate
//     on the written location's ancestors, on the location itself and on
//     each descendant present in the written value runs against the
//     post-write value at its own location; any failure denies the write.
//     Locations whose new value is null (deletes) are not validated.
//   - newData is the post-write value at the rule's own location, data the
//     pre-write value there, root the pre-write database root, now the
//     server time in milliseconds, and $wildcards the keys they matched. A
//     literal child wins over its $wildcard sibling.
//   - query, in .read rules only, is the read's query (Request.Query):
//     query.orderByKey/orderByPriority/orderByValue, orderByChild,
//     startAt/endAt/equalTo and limitToFirst/limitToLast; null members for
//     a plain read. A read's Decision lists the data locations its rules
//     observed (DataReads), so a database re-judges a standing listen only
//     when a write touches them.
//   - An error while evaluating a rule (a method called on null, a type
//     mismatch) denies that rule only; evaluation goes on with the next.
//
// Values are what encoding/json produces. Numbers are float64 at run time,
// as in JavaScript; trees may hold json.Number or Go integers, which are
// converted when read. Trees are never copied or modified.
package rtdb
