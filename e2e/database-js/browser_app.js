// The browser build of firebase@12.19.0's Realtime Database, bundled by
// browser.cjs with esbuild and exposed to the page as window.fb.
import { initializeApp } from 'firebase/app';
import * as database from 'firebase/database';

window.fb = { initializeApp, ...database };
