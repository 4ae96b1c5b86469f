// The app page of browser_idp.cjs: the browser build of firebase@12.19.0
// Auth (bundled with esbuild), connected to the emulator named by ?auth=,
// with one button per provider and flow that the test clicks as a user
// would. Each finished sign-in is pushed onto window.results.
import { initializeApp } from 'firebase/app';
import * as A from 'firebase/auth';

const q = new URLSearchParams(location.search);
const project = q.get('project');
const app = initializeApp({ apiKey: 'fake-api-key', projectId: project, authDomain: `${project}.firebaseapp.com` });
const auth = A.getAuth(app);
A.connectAuthEmulator(auth, q.get('auth'), { disableWarnings: true });

const provider = (id) => (id.startsWith('saml.') ? new A.SAMLAuthProvider(id) : new A.OAuthProvider(id));

// summary is what the test compares of a UserCredential.
async function summary(cred) {
  if (!cred) return null;
  const tok = await cred.user.getIdTokenResult();
  const info = A.getAdditionalUserInfo(cred);
  return {
    providerId: cred.providerId, uid: cred.user.uid, email: cred.user.email, name: cred.user.displayName,
    isNew: info && info.isNewUser, signInProvider: tok.signInProvider,
    providers: cred.user.providerData.map((p) => p.providerId),
  };
}

window.results = [];
const record = (p) => p.then(summary).then((s) => window.results.push(s), (e) => window.results.push({ error: e.code || String(e) }));
window.app = { A, auth, summary, record, provider };

window.addEventListener('DOMContentLoaded', () => {
  for (const id of ['oidc.acme', 'saml.corp']) {
    for (const flow of ['popup', 'redirect']) {
      const b = document.createElement('button');
      b.id = `${flow}-${id.replace('.', '-')}`;
      b.textContent = `Sign in with ${id} (${flow})`;
      b.onclick = () => record(flow === 'popup' ? A.signInWithPopup(auth, provider(id)) : A.signInWithRedirect(auth, provider(id)));
      document.body.append(b);
    }
  }
});
