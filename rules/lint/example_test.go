package lint_test

import (
	"fmt"
	"os"

	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
)

func Example() {
	f := source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{userId} {
      allow read: if request.uid == userId;
      allow write: if request.auth != null && request.auth.uid == userId
        && request.resource.data.name.size() < 100;
    }
  }
}
`)
	res := lint.Lint(f, lint.Options{Service: lint.Firestore})
	source.WriteText(os.Stdout, f, res.Diagnostics)
	fmt.Println("errors:", res.HasErrors())
	// Output:
	// firestore.rules:5:22: error: `request.uid` does not exist: request has auth, method, path, query, resource, time, and reading anything else fails at evaluation [WRONG_CONTEXT_PATH]
	//           allow read: if request.uid == userId;
	//                          ^^^^^^^^^^^
	//     fix: did you mean `request.auth.uid`?
	// errors: true
}
