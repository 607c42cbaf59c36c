// Yield site behaviour, inlined by renderYieldSite.ts under the page's CSP nonce. Plain browser
// JavaScript: connect the visitor's EIP-1193 wallet (window.ethereum), show their position, and
// deposit or withdraw by asking the wallet to send the ERC-20 approve and ERC-4626 deposit/withdraw.
// A vault whose redemption is asynchronous (ERC-7540, while sUSDe has a cooldown; it says so through
// ERC-165) takes a withdrawal request instead, lists the visitor's open requests with the time left
// until each is claimable, and offers a claim once any is.
// The page itself never calls a node: every read and write goes through the wallet.
(function yieldSite() {
  'use strict';

  var SELECTORS = {
    approve: '095ea7b3', // approve(address,uint256)
    allowance: 'dd62ed3e', // allowance(address,address)
    balanceOf: '70a08231', // balanceOf(address)
    deposit: '6e553f65', // deposit(uint256,address)
    withdraw: 'b460af94', // withdraw(uint256,address,address)
    maxWithdraw: 'ce96cb77', // maxWithdraw(address)
    totalAssets: '01e1d114', // totalAssets()
    supportsInterface: '01ffc9a7', // supportsInterface(bytes4)
    requestRedeem: '7d41c86e', // requestRedeem(uint256,address,address)
    redeemRequest: '21ff4d03', // redeemRequest(uint256) → (controller, shares, assets, claimableAt)
    openRedeemRequests: 'ec34be67', // openRedeemRequests(address) → uint256[]
    redeem: 'ba087652', // redeem(uint256,address,address)
    maxRedeem: 'd905777e', // maxRedeem(address)
    convertToAssets: '07a2d13a', // convertToAssets(uint256)
    convertToShares: 'c6e6f592', // convertToShares(uint256)
  };
  /** ERC-165 id of ERC-7540's asynchronous redeem interface. */
  var ERC7540_REDEEM_INTERFACE = '620ee8e4';
  var RECEIPT_POLL_MS = 500;
  /** The pending requests' countdown ticks every second; the chain is read again every REFRESH_MS. */
  var REFRESH_MS = 15000;

  var data = JSON.parse(document.getElementById('site-data').textContent);
  var provider = window.ethereum;
  var account = null;
  var connectButton = document.getElementById('connect');
  var walletStatus = document.getElementById('wallet-status');

  function word(hex) {
    return hex.padStart(64, '0');
  }
  function encodeAddress(address) {
    return word(address.slice(2).toLowerCase());
  }
  function encodeUint(value) {
    return word(value.toString(16));
  }
  function calldata(selector, words) {
    return '0x' + selector + words.join('');
  }

  /** "12.5" → 12500000000000000000n for 18 decimals; null for anything that is not a positive amount. */
  function parseAmount(text, decimals) {
    var match = /^\s*(\d+)(?:\.(\d+))?\s*$/.exec(text);
    if (!match) return null;
    var fraction = match[2] || '';
    if (fraction.length > decimals) return null;
    var units = BigInt(match[1] + fraction.padEnd(decimals, '0'));
    return units > 0n ? units : null;
  }
  function formatAmount(units, decimals, places) {
    var text = units.toString().padStart(decimals + 1, '0');
    var whole = text.slice(0, text.length - decimals).replace(/\B(?=(\d{3})+$)/g, ',');
    var fraction = text
      .slice(text.length - decimals)
      .padEnd(places, '0')
      .slice(0, places);
    return whole + '.' + fraction;
  }

  function request(method, params) {
    return provider.request({ method: method, params: params || [] });
  }
  function call(to, input) {
    return request('eth_call', [{ to: to, data: input }, 'latest']).then(function (result) {
      return BigInt(result === '0x' ? '0x0' : result);
    });
  }
  /** An eth_call's answer as 32-byte words. */
  function callWords(to, input) {
    return request('eth_call', [{ to: to, data: input }, 'latest']).then(function (result) {
      var words = [];
      for (var i = 2; i + 64 <= result.length; i += 64) words.push(BigInt('0x' + result.slice(i, i + 64)));
      return words;
    });
  }
  function sleep(ms) {
    return new Promise(function (resolve) {
      setTimeout(resolve, ms);
    });
  }
  async function send(to, input) {
    var hash = await request('eth_sendTransaction', [{ from: account, to: to, data: input }]);
    for (;;) {
      var receipt = await request('eth_getTransactionReceipt', [hash]);
      if (receipt) {
        if (receipt.status !== '0x1') throw new Error('The transaction reverted (' + hash + ')');
        return receipt;
      }
      await sleep(RECEIPT_POLL_MS);
    }
  }
  async function ensureChain() {
    var wanted = '0x' + data.chainId.toString(16);
    var current = await request('eth_chainId');
    if (parseInt(current, 16) === data.chainId) return;
    await request('wallet_switchEthereumChain', [{ chainId: wanted }]);
  }

  function vaultElements(vault) {
    var root = document.querySelector('[data-vault="' + vault.address + '"]');
    return {
      root: root,
      position: root.querySelector('[data-position]'),
      total: root.querySelector('[data-total-assets]'),
      message: root.querySelector('[data-message]'),
      deposit: root.querySelector('[data-action="deposit"]'),
      withdraw: root.querySelector('[data-action="withdraw"]'),
      request: root.querySelector('[data-action="request"]'),
      requests: root.querySelector('[data-requests]'),
      requestList: root.querySelector('[data-request-list]'),
      claim: root.querySelector('[data-claim]'),
    };
  }
  function say(elements, text, isError) {
    elements.message.textContent = text;
    elements.message.classList.toggle('error', Boolean(isError));
  }

  /** "6 d 23 h", "3 h 12 min", "4 min 10 s", "45 s". */
  function formatDuration(seconds) {
    var s = Math.max(0, Math.ceil(seconds));
    var d = Math.floor(s / 86400);
    var h = Math.floor((s % 86400) / 3600);
    var m = Math.floor((s % 3600) / 60);
    if (d > 0) return d + ' d ' + h + ' h';
    if (h > 0) return h + ' h ' + m + ' min';
    if (m > 0) return m + ' min ' + (s % 60) + ' s';
    return s + ' s';
  }

  /** Per vault: whether it redeems asynchronously, the visitor's shares and open requests, the chain's clock. */
  var state = {};

  async function redeemsAsynchronously(vault) {
    try {
      var answer = await call(
        vault.address,
        calldata(SELECTORS.supportsInterface, [ERC7540_REDEEM_INTERFACE.padEnd(64, '0')]),
      );
      return answer === 1n;
    } catch (error) {
      return false; // A vault without ERC-165 is a plain ERC-4626.
    }
  }

  async function chainTime() {
    var block = await request('eth_getBlockByNumber', ['latest', false]);
    return Number(BigInt(block.timestamp));
  }

  async function openRequests(vault) {
    var words = await callWords(
      vault.address,
      calldata(SELECTORS.openRedeemRequests, [encodeAddress(account)]),
    );
    var ids = words.slice(2, 2 + Number(words[1] || 0n));
    var requests = await Promise.all(
      ids.map(function (id) {
        return callWords(vault.address, calldata(SELECTORS.redeemRequest, [encodeUint(id)])).then(
          function (w) {
            return { id: id, shares: w[1], assets: w[2], claimableAt: Number(w[3]) };
          },
        );
      }),
    );
    return requests.sort(function (a, b) {
      return a.claimableAt - b.claimableAt;
    });
  }

  /** Seconds until the request is claimable (0 once it is), by the chain's clock as last read plus time since. */
  function secondsLeft(vaultState, pending) {
    if (pending.claimableAt === 0) return 0;
    var now = vaultState.chainNow + (Date.now() - vaultState.readAt) / 1000;
    return Math.max(0, pending.claimableAt - now);
  }

  function renderRequests(vault) {
    var elements = vaultElements(vault);
    var vaultState = state[vault.address];
    var requests = (vaultState && vaultState.requests) || [];
    elements.requests.hidden = requests.length === 0;
    elements.requestList.textContent = '';
    var claimable = 0n;
    requests.forEach(function (pending) {
      var left = secondsLeft(vaultState, pending);
      var item = document.createElement('li');
      item.setAttribute('data-request', pending.id.toString());
      var amount = document.createElement('span');
      amount.textContent = formatAmount(pending.assets, vault.decimals, 6) + ' ' + vault.symbol;
      var status = document.createElement('span');
      status.className = left > 0 ? 'pending' : 'claimable';
      status.setAttribute('data-status', left > 0 ? 'pending' : 'claimable');
      status.textContent = left > 0 ? 'Claimable in ' + formatDuration(left) : 'Ready to claim';
      item.append(amount, status);
      elements.requestList.append(item);
      if (left === 0) claimable += pending.assets;
    });
    elements.claim.hidden = claimable === 0n;
    elements.claim.textContent = 'Claim ' + formatAmount(claimable, vault.decimals, 6) + ' ' + vault.symbol;
  }

  async function refresh(vault) {
    var elements = vaultElements(vault);
    var total = await call(vault.address, calldata(SELECTORS.totalAssets, []));
    elements.total.textContent = formatAmount(total, vault.decimals, 2) + ' ' + vault.symbol;
    if (!account) return;
    var asynchronous = await redeemsAsynchronously(vault);
    elements.withdraw.hidden = asynchronous;
    elements.request.hidden = !asynchronous;
    var shares = await call(vault.address, calldata(SELECTORS.balanceOf, [encodeAddress(account)]));
    var [requests, chainNow, position] = await Promise.all([
      openRequests(vault),
      chainTime(),
      // While redemption is asynchronous nothing is withdrawable before a request: show what the shares are worth.
      asynchronous
        ? call(vault.address, calldata(SELECTORS.convertToAssets, [encodeUint(shares)]))
        : call(vault.address, calldata(SELECTORS.maxWithdraw, [encodeAddress(account)])),
    ]);
    state[vault.address] = {
      shares: shares,
      position: position,
      requests: requests,
      chainNow: chainNow,
      readAt: Date.now(),
    };
    elements.position.textContent = formatAmount(position, vault.decimals, 6) + ' ' + vault.symbol;
    elements.position.setAttribute('data-units', position.toString());
    renderRequests(vault);
  }

  async function deposit(vault, amount) {
    var elements = vaultElements(vault);
    await ensureChain();
    var allowance = await call(
      vault.asset,
      calldata(SELECTORS.allowance, [encodeAddress(account), encodeAddress(vault.address)]),
    );
    if (allowance < amount) {
      say(elements, 'Approve ' + vault.symbol + ' in your wallet…');
      await send(
        vault.asset,
        calldata(SELECTORS.approve, [encodeAddress(vault.address), encodeUint(amount)]),
      );
    }
    say(elements, 'Confirm the deposit in your wallet…');
    await send(vault.address, calldata(SELECTORS.deposit, [encodeUint(amount), encodeAddress(account)]));
    say(elements, 'Deposited ' + formatAmount(amount, vault.decimals, 6) + ' ' + vault.symbol + '.');
  }

  async function withdraw(vault, amount) {
    var elements = vaultElements(vault);
    await ensureChain();
    say(elements, 'Confirm the withdrawal in your wallet…');
    await send(
      vault.address,
      calldata(SELECTORS.withdraw, [encodeUint(amount), encodeAddress(account), encodeAddress(account)]),
    );
    say(elements, 'Withdrew ' + formatAmount(amount, vault.decimals, 6) + ' ' + vault.symbol + '.');
  }

  /** Burns the shares worth `amount` (all of them when `amount` is the whole position) and starts their cooldown. */
  async function requestWithdrawal(vault, amount) {
    var elements = vaultElements(vault);
    var current = state[vault.address];
    await ensureChain();
    var shares =
      current && amount >= current.position
        ? current.shares
        : await call(vault.address, calldata(SELECTORS.convertToShares, [encodeUint(amount)]));
    if (shares === 0n) throw new Error('That amount is smaller than one vault share.');
    say(elements, 'Confirm the withdrawal request in your wallet…');
    await send(
      vault.address,
      calldata(SELECTORS.requestRedeem, [encodeUint(shares), encodeAddress(account), encodeAddress(account)]),
    );
    say(
      elements,
      'Requested ' +
        formatAmount(amount, vault.decimals, 6) +
        ' ' +
        vault.symbol +
        ': claim it here once the cooldown ends.',
    );
  }

  /** Redeems every claimable request (ERC-7540 redeem of maxRedeem shares). */
  async function claim(vault) {
    var elements = vaultElements(vault);
    await ensureChain();
    var shares = await call(vault.address, calldata(SELECTORS.maxRedeem, [encodeAddress(account)]));
    if (shares === 0n) throw new Error('Nothing is claimable yet.');
    say(elements, 'Confirm the claim in your wallet…');
    var before = await call(vault.asset, calldata(SELECTORS.balanceOf, [encodeAddress(account)]));
    await send(
      vault.address,
      calldata(SELECTORS.redeem, [encodeUint(shares), encodeAddress(account), encodeAddress(account)]),
    );
    var after = await call(vault.asset, calldata(SELECTORS.balanceOf, [encodeAddress(account)]));
    say(elements, 'Claimed ' + formatAmount(after - before, vault.decimals, 6) + ' ' + vault.symbol + '.');
  }

  function bind(vault) {
    var elements = vaultElements(vault);
    var forms = [
      [elements.deposit, deposit],
      [elements.withdraw, withdraw],
      [elements.request, requestWithdrawal],
    ];
    forms.forEach(function (pair) {
      var form = pair[0];
      var act = pair[1];
      if (!form) return;
      form.addEventListener('submit', async function (event) {
        event.preventDefault();
        if (!account) return say(elements, 'Connect a wallet first.', true);
        var amount = parseAmount(form.elements.amount.value, vault.decimals);
        if (amount === null)
          return say(elements, 'Enter a positive amount (at most ' + vault.decimals + ' decimals).', true);
        var button = form.querySelector('button[type="submit"]');
        button.disabled = true;
        try {
          await act(vault, amount);
          form.elements.amount.value = '';
        } catch (error) {
          say(elements, (error && error.message) || String(error), true);
        } finally {
          button.disabled = false;
          await refresh(vault).catch(function () {});
        }
      });
    });
    [elements.withdraw, elements.request].forEach(function (form) {
      form.querySelector('[data-max]').addEventListener('click', function () {
        var units = elements.position.getAttribute('data-units');
        if (units) form.elements.amount.value = formatAmount(BigInt(units), vault.decimals, vault.decimals);
      });
    });
    elements.claim.addEventListener('click', async function () {
      elements.claim.disabled = true;
      try {
        await claim(vault);
      } catch (error) {
        say(elements, (error && error.message) || String(error), true);
      } finally {
        elements.claim.disabled = false;
        await refresh(vault).catch(function () {});
      }
    });
  }

  /** Counts the open requests down every second and reads the chain again now and then. */
  function keepRequestsCurrent() {
    var ticks = 0;
    setInterval(function () {
      ticks += 1;
      if (!account) return;
      data.vaults.forEach(function (vault) {
        if ((ticks * 1000) % REFRESH_MS === 0) refresh(vault).catch(function () {});
        else if (state[vault.address]) renderRequests(vault);
      });
    }, 1000);
  }

  async function connect() {
    try {
      var accounts = await request('eth_requestAccounts');
      account = accounts[0] || null;
      if (!account) throw new Error('The wallet shared no account');
      await ensureChain();
      walletStatus.textContent = 'Connected: ' + account;
      connectButton.hidden = true;
      await Promise.all(data.vaults.map(refresh));
    } catch (error) {
      walletStatus.textContent = 'Could not connect: ' + ((error && error.message) || String(error));
    }
  }

  data.vaults.forEach(bind);
  keepRequestsCurrent();
  if (!provider) {
    connectButton.disabled = true;
    walletStatus.textContent =
      'No wallet found: open this page in a browser with an Ethereum wallet to deposit or withdraw.';
  } else {
    connectButton.addEventListener('click', connect);
  }
})();
