// Checkout page behaviour, inlined by renderCheckoutPage.ts under the page's CSP nonce.
// Plain browser JavaScript: the token × network chooser, copy buttons, the expiry countdown,
// and live status from GET /v1/sessions/{id}/status every 2 s, redirecting to successUrl once
// the merchant's webhook was delivered (never before).
(function checkout() {
  'use strict';

  var POLL_INTERVAL_MS = 2000;
  var MAX_POLL_INTERVAL_MS = 15000;
  var REDIRECT_DELAY_MS = 1200;
  var PAY_STATES = ['pending', 'awaiting_payment'];
  // Ended here for good: no redirect, no more polling (underpaid is an expired session partly paid).
  var ENDED_STATES = ['failed', 'expired', 'underpaid'];
  // After expiry the page is loaded again once, so the server can tell expired from underpaid.
  var RELOAD_AFTER_EXPIRY_MS = 3000;

  var data = JSON.parse(document.getElementById('checkout-data').textContent);
  // The server's clock decides expiry; measure how far this device's clock is off from it.
  var clockOffsetMs = Date.parse(data.serverNow) - Date.now();
  var expiresAtMs = Date.parse(data.expiresAt);
  var state = { status: data.status, webhookDelivered: data.webhookDelivered, redirecting: false };

  function formatTimeRemaining(milliseconds) {
    var totalSeconds = Math.max(0, Math.floor(milliseconds / 1000));
    var days = Math.floor(totalSeconds / 86400);
    var hours = Math.floor((totalSeconds % 86400) / 3600);
    var minutes = Math.floor((totalSeconds % 3600) / 60);
    var seconds = totalSeconds % 60;
    var two = function (value) {
      return String(value).padStart(2, '0');
    };
    if (days > 0) return days + 'd ' + hours + 'h';
    if (hours > 0) return hours + ':' + two(minutes) + ':' + two(seconds);
    return minutes + ':' + two(seconds);
  }

  // --- Status -------------------------------------------------------------------------------

  function showStatus(status) {
    state.status = status;
    document.body.setAttribute('data-status', status);
    document.querySelectorAll('[data-show-when]').forEach(function (element) {
      element.hidden = element.getAttribute('data-show-when').split(' ').indexOf(status) === -1;
    });
    var label = document.querySelector('[data-status-label]');
    if (label) label.textContent = data.statusLabels[status] || status;
  }

  function safeSuccessUrl() {
    if (!data.successUrl) return null;
    try {
      var url = new URL(data.successUrl);
      return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
    } catch (error) {
      return null;
    }
  }

  // The redirect waits for the webhook delivery (SPEC: Events); a failed or expired session stays here.
  function shouldRedirect() {
    return state.webhookDelivered && safeSuccessUrl() !== null && ENDED_STATES.indexOf(state.status) === -1;
  }

  function redirect() {
    state.redirecting = true;
    document.querySelector('[data-redirect-notice]').hidden = false;
    setTimeout(function () {
      window.location.assign(safeSuccessUrl());
    }, REDIRECT_DELAY_MS);
  }

  function needsPolling() {
    if (state.redirecting || ENDED_STATES.indexOf(state.status) !== -1) return false;
    // A completed session is final; keep asking only while a redirect still waits for the webhook.
    return state.status !== 'completed' || safeSuccessUrl() !== null;
  }

  function poll(delayMs) {
    setTimeout(function () {
      fetch(data.statusUrl, { cache: 'no-store', headers: { accept: 'application/json' } })
        .then(function (response) {
          if (!response.ok) throw new Error('status ' + response.status);
          return response.json();
        })
        .then(function (view) {
          state.webhookDelivered = view.webhookDelivered === true;
          if (view.status === 'expired' && PAY_STATES.indexOf(state.status) !== -1) expiredHere();
          else if (view.status !== state.status) showStatus(view.status);
          if (shouldRedirect()) redirect();
          if (needsPolling()) poll(POLL_INTERVAL_MS);
        })
        .catch(function () {
          // Offline or a server hiccup: keep trying, backing off gently.
          poll(Math.min(delayMs * 2, MAX_POLL_INTERVAL_MS));
        });
    }, delayMs);
  }

  // --- Countdown ----------------------------------------------------------------------------

  // The request expired while the page was open: show it at once, then load the page again so that a
  // partial payment that arrived in time shows as underpaid, with what was received.
  function expiredHere() {
    showStatus('expired');
    setTimeout(function () {
      window.location.reload();
    }, RELOAD_AFTER_EXPIRY_MS);
  }

  var countdown = document.querySelector('[data-countdown]');

  function tick() {
    var remaining = expiresAtMs - (Date.now() + clockOffsetMs);
    if (countdown) countdown.textContent = formatTimeRemaining(remaining);
    // Expiry is the server's rule too (awaiting_payment past expiresAt reads as expired).
    if (remaining <= 0 && PAY_STATES.indexOf(state.status) !== -1) expiredHere();
    setTimeout(tick, 1000 - ((Date.now() + clockOffsetMs) % 1000));
  }

  // --- Token × network chooser --------------------------------------------------------------

  var panels = Array.prototype.slice.call(document.querySelectorAll('[data-option]'));
  var networkInputs = Array.prototype.slice.call(document.querySelectorAll('input[name="network"]'));

  function checkedValue(name) {
    var input = document.querySelector('input[name="' + name + '"]:checked');
    return input ? input.value : null;
  }

  function showSelectedOption() {
    var token = checkedValue('token');
    var chainsWithToken = panels
      .filter(function (panel) {
        return panel.getAttribute('data-symbol') === token;
      })
      .map(function (panel) {
        return panel.getAttribute('data-chain-id');
      });
    networkInputs.forEach(function (input) {
      input.disabled = chainsWithToken.indexOf(input.value) === -1;
    });
    var chain = checkedValue('network');
    if (chainsWithToken.indexOf(chain) === -1) {
      var firstAvailable = networkInputs.filter(function (input) {
        return !input.disabled;
      })[0];
      if (firstAvailable) {
        firstAvailable.checked = true;
        chain = firstAvailable.value;
      }
    }
    panels.forEach(function (panel) {
      panel.hidden = !(
        panel.getAttribute('data-symbol') === token && panel.getAttribute('data-chain-id') === chain
      );
    });
  }

  document.querySelectorAll('input[name="token"], input[name="network"]').forEach(function (input) {
    input.addEventListener('change', showSelectedOption);
  });

  // --- Copy buttons -------------------------------------------------------------------------

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // Older browsers and plain-http previews: copy through a temporary selection.
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'offscreen';
      document.body.appendChild(area);
      area.select();
      var copied = document.execCommand('copy');
      document.body.removeChild(area);
      if (copied) resolve();
      else reject(new Error('copy refused'));
    });
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-copy]');
    if (!button) return;
    copyText(button.getAttribute('data-copy')).then(
      function () {
        button.textContent = 'Copied';
        button.classList.add('copied');
        setTimeout(function () {
          button.textContent = 'Copy';
          button.classList.remove('copied');
        }, 1500);
      },
      function () {
        button.textContent = 'Select & copy';
      },
    );
  });

  // --- Start --------------------------------------------------------------------------------

  showSelectedOption();
  showStatus(state.status);
  tick();
  if (shouldRedirect()) redirect();
  else if (needsPolling()) poll(POLL_INTERVAL_MS);
})();
