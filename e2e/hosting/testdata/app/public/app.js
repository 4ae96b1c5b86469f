// The app: reads its config from /__/firebase/init.json, signs in with
// the Auth emulator and writes its note to Firestore, through pyric.
window.saveNote = async function (text) {
  const config = await (await fetch('/__/firebase/init.json')).json();
  const cred = await firebase.auth().signInAnonymously();
  const uid = cred.user.uid;
  const ref = firebase.firestore().doc('notes/' + uid);
  await ref.set({ text: text, uid: uid });
  const snap = await ref.get();
  let denied = '';
  try {
    await firebase.firestore().doc('notes/someone-else').set({ text: 'x' });
  } catch (e) {
    denied = e.code;
  }
  document.getElementById('status').textContent = 'saved';
  return { projectId: config.projectId, appProject: firebase.app().options.projectId, uid: uid, text: snap.data().text, denied: denied };
};
