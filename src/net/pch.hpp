// Precompiled for every library translation unit: Asio and Beast are the heaviest headers
// in the build, and most net/ sources need all of them.
#pragma once
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
