// The browser build of firebase@12.19.0 Firestore, bundled by browser.mjs
// with esbuild and exposed to the page as window.fb.
import { initializeApp } from 'firebase/app';
import * as firestore from 'firebase/firestore';

window.fb = { initializeApp, ...firestore };
