// The browser build of firebase@12.19.0 Storage, bundled by browser.cjs
// with esbuild and exposed to the page as window.fb.
import { initializeApp } from 'firebase/app';
import * as storage from 'firebase/storage';

window.fb = { initializeApp, ...storage };
